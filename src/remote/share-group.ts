import path from 'node:path';
import type { Env } from '../context.js';
import { listGroupNames, readGroup } from '../group/store.js';
import { readMeta } from '../ledger/meta.js';
import type { Ledger } from '../ledger/paths.js';
import { type GroupPublication, publishGroup } from './publish-group.js';
import { hostName } from './share.js';
import { pushGroup } from './transport.js';

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
