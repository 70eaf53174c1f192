import path from 'node:path';
import type { Env } from '../context.js';
import { type GroupDetails, listGroupNames, readGroup } from '../group/store.js';
import { readMeta } from '../ledger/meta.js';
import type { Ledger } from '../ledger/paths.js';
import { git } from './git.js';
import { type GroupPublication, publishGroup } from './publish-group.js';
import {
  branchRef,
  checkRemoteName,
  DEFAULT_REMOTE,
  groupRef,
  runRef,
  trackingGroups,
  trackingHeads,
  trackingRuns,
} from './refs.js';
import { hostName } from './share.js';
import { deleteRemoteRefs, pushGroup } from './transport.js';

export interface SharedGroup extends GroupPublication {
  readonly remote: string;
  /** The attempts whose branch went along. */
  readonly branches: readonly string[];
}

/** `agentbox push <group>`, and `--push` once a group ends: publish the group whole, then push it. */
export async function shareGroup(
  ledger: Ledger,
  name: string,
  remote: string,
  opts: { readonly env: Env; readonly raw?: boolean },
): Promise<SharedGroup> {
  const publication = await publishGroup(ledger, name, {
    env: opts.env,
    raw: opts.raw === true,
    host: hostName(opts.env),
  });
  const runs = publication.attempts.map((a) => a.run);
  const branches = await pushGroup({ cwd: ledger.root, env: opts.env }, remote, name, runs);
  return { ...publication, remote, branches };
}

/**
 * The groups the runs in `runs` are attempts of (their meta.yaml `options.group.name`), and those
 * this process runs (its pid in their state.json) started since `since`: how `--push` finds the
 * group it ran without the run command telling it.
 */
export function groupsStartedBy(ledger: Ledger, runs: readonly string[], pid: number, since: Date): string[] {
  const found = new Set<string>();
  const groups = new Set(listGroupNames(ledger));
  for (const run of runs) {
    const name = groupNameOf(ledger, run);
    if (name !== null && groups.has(name)) found.add(name);
  }
  for (const name of groups) {
    try {
      const { state } = readGroup(ledger, name);
      if (state.pid === pid && Date.parse(state.started_at) >= since.getTime() - 1000) found.add(name);
    } catch {
      // A group that cannot be read was not started by this process a moment ago.
    }
  }
  return [...found].sort();
}

/** The group a run is an attempt of, by its meta.yaml; null for a plain run. */
export function groupNameOf(ledger: Ledger, run: string): string | null {
  try {
    const group = readMeta(path.join(ledger.runsDir, run))?.options?.group;
    const name = (group as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' ? name : null;
  } catch {
    return null;
  }
}

/**
 * Deletes a published group from the remote whole: its group ref and every attempt's ledger ref
 * and branch (under the names they were published as), in one atomic push, and this clone's
 * copies of them. For `agentbox discard <group> --remote`: deleting the attempts alone would leave
 * the group's publication holding them (they are its commit's parents).
 */
export async function unpublishGroup(
  ledger: Ledger,
  group: GroupDetails,
  remoteOption: string | true,
  env: Env,
): Promise<{ remote: string; deleted: string[] }> {
  const origin = group.meta.origin;
  const remote = checkRemoteName(remoteOption === true ? (origin?.remote ?? DEFAULT_REMOTE) : remoteOption);
  const runs = group.state.members.flatMap((m) => {
    if (m.run === null) return [];
    const meta = safeRunMeta(ledger, m.run);
    return [meta?.origin?.run ?? m.run];
  });
  const published = origin?.run ?? group.name;
  const refs = [groupRef(published), ...runs.flatMap((run) => [runRef(run), branchRef(run)])];
  const call = { cwd: ledger.root, env };
  const deleted = await deleteRemoteRefs(call, remote, refs);
  const local = [
    `${trackingGroups(remote)}${published}`,
    ...runs.flatMap((run) => [`${trackingRuns(remote)}${run}`, `${trackingHeads(remote)}${run}`]),
    ...(origin ? [] : [groupRef(published), ...runs.map(runRef)]),
  ];
  await git({ ...call, input: local.map((ref) => `delete ${ref}\n`).join('') }, ['update-ref', '--stdin']);
  return { remote, deleted };
}

function safeRunMeta(ledger: Ledger, run: string) {
  try {
    return readMeta(path.join(ledger.runsDir, run));
  } catch {
    return undefined;
  }
}
