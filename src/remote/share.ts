import os from 'node:os';
import path from 'node:path';
import type { Env } from '../context.js';
import { listRunNames } from '../ledger/list.js';
import { formatStamp } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { readState } from '../ledger/state.js';
import type { RunMeta } from '../ledger/types.js';
import { git } from './git.js';
import { type Publication, publishRun } from './publish.js';
import { checkRemoteName, DEFAULT_REMOTE, runRef, trackingHeads, trackingRuns } from './refs.js';
import { deleteRemoteRun, pushRun } from './transport.js';

export interface Shared extends Publication {
  readonly remote: string;
  /** The run's branch went along. */
  readonly branch: boolean;
}

/** The name a publication records: AGENTBOX_HOST when set (a CI job's own words), else the machine's. */
export function hostName(env: Env): string {
  return env.AGENTBOX_HOST || os.hostname();
}

/** `agentbox push`, and what `--push` does once its run ends: publish the run, then push it. */
export async function shareRun(
  ledger: Ledger,
  name: string,
  remote: string,
  opts: { readonly env: Env; readonly raw?: boolean },
): Promise<Shared> {
  const publication = await publishRun(ledger, name, {
    env: opts.env,
    raw: opts.raw === true,
    host: hostName(opts.env),
  });
  const { branch } = await pushRun({ cwd: ledger.root, env: opts.env }, remote, name);
  return { ...publication, remote, branch };
}

/**
 * The runs this process created since `since`: how `--push` finds its run without the run
 * command telling it (a run records the process that supervises it, and its start). Newest first.
 */
export function runsStartedBy(ledger: Ledger, pid: number, since: Date): string[] {
  const stamp = formatStamp(since);
  return listRunNames(ledger)
    .filter((name) => name >= stamp)
    .filter((name) => {
      try {
        const state = readState(path.join(ledger.runsDir, name));
        return state !== null && state.pid === pid && Date.parse(state.started_at) >= since.getTime() - 1000;
      } catch {
        return false;
      }
    });
}

/**
 * `agentbox discard <run> --remote`: deletes the run's refs on the remote (its ledger entry and
 * branch, under the name it was published as) and this clone's copies of them. The run folder
 * stays, as a discard keeps it.
 */
export async function unpublishRun(
  ledger: Ledger,
  meta: RunMeta,
  remoteOption: string | true,
  env: Env,
): Promise<{ remote: string; deleted: string[] }> {
  const remote = checkRemoteName(
    remoteOption === true ? (meta.origin?.remote ?? DEFAULT_REMOTE) : remoteOption,
  );
  const published = meta.origin?.run ?? meta.run_name;
  const call = { cwd: ledger.root, env };
  const deleted = await deleteRemoteRun(call, remote, published);
  const local = [trackingRuns(remote), trackingHeads(remote)].map((ns) => `${ns}${published}`);
  if (!meta.origin) local.push(runRef(published));
  const input = local.map((ref) => `delete ${ref}\n`).join('');
  await git({ ...call, input }, ['update-ref', '--stdin']);
  return { remote, deleted };
}
