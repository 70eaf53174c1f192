import { git } from '../git/exec.js';
import { type LiveTree, liveTree } from '../git/live-diff.js';
import type { RunDetails } from '../ledger/index.js';
import { changesExcludes } from '../run/end/finalize-changes.js';
import { nestedOfRun } from '../run/end/finalize-nested.js';
import type { Env } from '../util/env.js';

/** A fix run's changes so far, while it is ACTIVE: marked in progress wherever it is shown. */
export interface LiveChanges extends LiveTree {
  readonly base: string;
  readonly in_progress: true;
}

/** Whether `run` is a fix run working in its worktree now: its diff is the live one. */
export function isLive(run: RunDetails): boolean {
  return (
    run.meta.type === 'fix' &&
    run.state?.status === 'ACTIVE' &&
    Boolean(run.state.worktree_path) &&
    Boolean(run.meta.repo_sha_start)
  );
}

/**
 * The worktree's changes against the run's base, as changes.patch would hold them now (the same
 * exclusions: changesExcludes), through the hardened git (src/git/live-diff.ts). null when the run
 * is not live (isLive). `root` is the main repository, whose git dir the worktree shares.
 */
export async function liveChanges(root: string, run: RunDetails, env?: Env): Promise<LiveChanges | null> {
  if (!isLive(run)) return null;
  const base = run.meta.repo_sha_start!;
  const worktree = run.state!.worktree_path!;
  const call = { cwd: root, ...(env ? { env } : {}) };
  const commonDir = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], call);
  const nested = nestedOfRun(run.dir).map((n) => n.path);
  const exclude = changesExcludes(run.meta.run_id, nested);
  const tree = await liveTree({ commonDir, worktree, base, exclude, ...(env ? { env } : {}) });
  return { ...tree, base, in_progress: true };
}
