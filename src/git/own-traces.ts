import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { listWorktrees, type WorktreeInfo } from './worktree.js';

/** What of a run's git traces is agentbox's to remove, and what its state names that is not. */
export interface OwnTraces {
  /** The run's worktree: checked out on its branch, at the path its state records. */
  readonly worktree: string | null;
  /** `agentbox/<run>`, when its state names it. */
  readonly branch: string | null;
  /** What the state names that is not the run's own (left as it is), for the person to read. */
  readonly left: readonly string[];
}

/** A path as the file system has it (a link resolved), else as written, made absolute. */
function real(root: string, p: string): string {
  const abs = path.resolve(root, p);
  try {
    return fs.realpathSync(abs);
  } catch {
    return abs;
  }
}

/**
 * The worktree and branch agentbox made for run `name`: the branch is always `agentbox/<run>`,
 * and its worktree is the one git has on that branch. Pure but for resolving paths.
 *
 * NOTE: state.json is a file of the ledger, and a cloned repository can carry a ledger
 * (`.agents/` added with `git add -f`): a planted run whose state named the person's own
 * worktree (`../wip`) and branch had `discard` remove both (`worktree remove --force`, `branch
 * -D`), their uncommitted work with them. What git says — the worktree is on the run's own
 * branch — decides, not what the file claims.
 */
export function ownTraces(
  root: string,
  name: string,
  state: { readonly worktree_path: string | null; readonly branch: string | null },
  worktrees: readonly WorktreeInfo[],
): OwnTraces {
  const own = `agentbox/${name}`;
  const left: string[] = [];
  if (state.branch && state.branch !== own) left.push(`branch ${state.branch}`);
  let worktree: string | null = null;
  if (state.worktree_path) {
    const at = real(root, state.worktree_path);
    const listed = worktrees.find((w) => real(root, w.path) === at);
    if (listed && listed.branch !== own) left.push(`worktree ${state.worktree_path}`);
    else worktree = state.worktree_path;
  }
  return { worktree, branch: state.branch === own ? own : null, left };
}

/**
 * Whether `worktree` is run `name`'s own: a worktree git has checked out on `agentbox/<name>`.
 * What a resume, a recovery's roll back or a revision works in (a planted state could name the
 * person's own checkout, which a roll back resets and cleans).
 */
export async function isOwnWorktree(root: string, name: string, worktree: string): Promise<boolean> {
  const at = real(root, worktree);
  return (await listWorktrees(root)).some(
    (w) => w.branch === `agentbox/${name}` && real(root, w.path) === at,
  );
}

/** Refuses, before anything changes, a run whose recorded worktree is not its own (isOwnWorktree). */
export async function assertOwnWorktree(root: string, name: string, worktree: string | null): Promise<void> {
  if (!worktree || (await isOwnWorktree(root, name, worktree))) return;
  const id = name.slice(-6);
  throw new AgentboxError(
    'RUN_CORRUPT',
    `run ${name} records the worktree ${worktree}, which is not its own (git has no worktree there on agentbox/${name}): nothing was changed`,
    {
      hint: `a run folder that came with the repository (its .agents/ in git) is not one of yours: see it with agentbox show ${id}, or discard it: agentbox discard ${id}`,
    },
  );
}
