import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import { type LiveTree, liveTree } from '../git/live-diff.js';
import { assertOwnWorktree } from '../git/own-traces.js';
import type { RunDetails } from '../ledger/index.js';
import { changesExcludes } from '../run/end/finalize-changes.js';
import { nestedOfRun } from '../run/end/finalize-nested.js';
import type { Env } from '../util/env.js';

/** A fix run's changes so far, while it is ACTIVE: marked in progress wherever it is shown. */
export interface LiveChanges extends LiveTree {
  readonly base: string;
  readonly in_progress: true;
}

/**
 * What Claude Code's sandbox puts in the worktree while a command runs, as empty files or folders
 * (mount points for its built-in write protection, agentbox's own `.agentbox` deny, its
 * bookkeeping), measured with 2.1.330 (/work/shared/claude-code-facts.md): gone once the command
 * ends, so never in changes.patch. A live diff taken meanwhile leaves them out while they are empty.
 */
export const SANDBOX_MASKS: readonly string[] = [
  '.bashrc',
  '.bash_profile',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.gitconfig',
  '.gitmodules',
  '.mcp.json',
  '.ripgreprc',
  '.vscode',
  '.idea',
  '.agentbox',
  '.claude/.cc-writes',
  // Claude Code's protection of its own config in the worktree, seen in a live diff once reads are
  // denied by default (issue 37): each an empty mount point while a command runs.
  '.claude/agents',
  '.claude/hooks',
  '.claude/launch.json',
  '.claude/loop.md',
  '.claude/output-styles',
  '.claude/routines',
  '.claude/scheduled_tasks.json',
  '.claude/settings.local.json',
  '.claude/skills',
  '.claude/workflows',
];

/**
 * The masks to leave out of a live diff of `worktree`: each present as an empty file, device or
 * folder, and each absent one too, unless the base tracks it (a deletion to show). The sandbox
 * makes its masks when a command starts: one made between this look and git's scan of the
 * worktree would otherwise show as a new file (seen on a loaded machine).
 */
export function maskedPaths(worktree: string, trackedAtBase: ReadonlySet<string>): string[] {
  return SANDBOX_MASKS.filter((name) => {
    try {
      const stat = fs.lstatSync(path.join(worktree, name));
      return stat.isDirectory() ? fs.readdirSync(path.join(worktree, name)).length === 0 : stat.size === 0;
    } catch {
      return !trackedAtBase.has(name);
    }
  });
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
  if (!fs.existsSync(worktree)) {
    throw new AgentboxError('USAGE', `run ${run.name} is ACTIVE but its worktree is gone: ${worktree}`, {
      hint: `see what happened: agentbox show ${run.meta.run_id}, then agentbox recover`,
    });
  }
  // A planted state could name any folder (your home): only the run's own worktree is staged.
  await assertOwnWorktree(root, run.name, worktree);
  const call = { cwd: root, ...(env ? { env } : {}) };
  const commonDir = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], call);
  const nested = nestedOfRun(run.dir).map((n) => n.path);
  const tracked = await git(
    ['ls-tree', '-r', '--name-only', '--end-of-options', base, '--', ...SANDBOX_MASKS],
    call,
  );
  // A tracked `.vscode/settings.json` makes `.vscode` a tracked mask.
  const trackedMasks = new Set(
    tracked
      .split('\n')
      .flatMap((file) => SANDBOX_MASKS.filter((m) => file === m || file.startsWith(`${m}/`))),
  );
  const masks = maskedPaths(worktree, trackedMasks);
  const exclude = [...changesExcludes(run.meta.run_id, nested), ...masks];
  const tree = await liveTree({ commonDir, worktree, base, exclude, ...(env ? { env } : {}) });
  return { ...tree, base, in_progress: true };
}
