import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentboxError } from '../errors.js';
import { GitError, type GitResult, runGit } from './exec.js';
import type { GitSettings } from './inert.js';
import { personFiltersOff } from './person-git.js';

export interface WorktreeInfo {
  path: string;
  /** null on an unborn branch (git prints a sha of zeros) and in a bare repository. */
  head: string | null;
  /** `refs/heads/x` stripped to `x`; null when detached or bare. */
  branch: string | null;
  bare: boolean;
  detached: boolean;
  locked: boolean;
  prunable: boolean;
}

/**
 * Reads `git worktree list --porcelain`: records of `key value` lines, separated by a blank line
 * (or NUL-separated fields with `-z`). Unknown keys are skipped, so a newer git stays readable.
 * Pure.
 */
export function parseWorktreeList(porcelain: string): WorktreeInfo[] {
  const lines = porcelain.includes('\0') ? porcelain.split('\0') : porcelain.split(/\r?\n/);
  const out: WorktreeInfo[] = [];
  let current: WorktreeInfo | undefined;
  for (const line of lines) {
    if (line === '') {
      current = undefined;
      continue;
    }
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    if (key === 'worktree') {
      current = {
        path: value,
        head: null,
        branch: null,
        bare: false,
        detached: false,
        locked: false,
        prunable: false,
      };
      out.push(current);
    } else if (current) {
      if (key === 'HEAD') current.head = /^0*$/.test(value) ? null : value;
      else if (key === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
      else if (key === 'bare') current.bare = true;
      else if (key === 'detached') current.detached = true;
      else if (key === 'locked') current.locked = true;
      else if (key === 'prunable') current.prunable = true;
    }
  }
  return out;
}

export async function listWorktrees(repoRoot: string): Promise<WorktreeInfo[]> {
  const args = ['worktree', 'list', '--porcelain'];
  const result = await runGit(args, { cwd: repoRoot });
  if (result.exitCode !== 0) throw gitFailed(args, repoRoot, result);
  return parseWorktreeList(result.stdout);
}

/** The commit HEAD points at; null on an unborn branch (a repository without commits). */
export async function headSha(repoRoot: string): Promise<string | null> {
  const args = ['rev-parse', '-q', '--verify', 'HEAD^{commit}'];
  const result = await runGit(args, { cwd: repoRoot });
  if (result.exitCode === 0) return result.stdout.trim();
  if (result.exitCode === 1) return null;
  throw gitFailed(args, repoRoot, result);
}

/**
 * A new branch `branch` at `base`, checked out in a new worktree at `path`. Safe to call many
 * times in parallel on one repository. When it fails, neither the branch nor the worktree is left.
 */
export async function addWorktree(
  repoRoot: string,
  opts: { path: string; branch: string; base: string },
): Promise<void> {
  const { branch, base } = opts;
  const target = path.resolve(repoRoot, opts.path);
  if (!isEmptyOrMissing(target)) throw pathExists(target);
  // NOTE: two steps instead of `git worktree add -b`, which runs `git branch` itself and then
  // leaves the branch behind when the checkout step fails (as it does under contention). Same
  // number of processes. `--no-track`: a run's branch must never push to the base's upstream.
  const created = await gitRetrying(repoRoot, ['branch', '--no-track', '--', branch, base]);
  if (created.exitCode !== 0) throw await branchError(repoRoot, branch, base, created.stderr);
  const config = await foreignBaseFilters(repoRoot, branch);
  const added = await gitRetrying(repoRoot, ['worktree', 'add', '--quiet', '--', target, branch], config);
  if (added.exitCode === 0) return;
  await gitRetrying(repoRoot, ['branch', '-D', '--', branch]);
  if (/already exists/.test(added.stderr)) throw pathExists(target);
  throw new AgentboxError('WORKTREE_FAILED', `cannot create the worktree ${target}: ${firstLine(added)}`, {
    hint: /missing but locked/.test(added.stderr)
      ? `git still lists a deleted, locked worktree there: run "git worktree unlock ${target}" and "git worktree prune"`
      : /missing but already registered/.test(added.stderr)
        ? `git still lists a deleted worktree there: run "git worktree prune" and try again`
        : `run "git worktree add ${target} ${base}" to see git's full message`,
  });
}

/**
 * Removes the worktree (with --force: the run's changes are already exported) and, when asked,
 * its branch. Idempotent: what is already gone is not an error.
 */
export async function removeWorktree(
  repoRoot: string,
  opts: { path: string; branch?: string | null; deleteBranch: boolean },
): Promise<{ removedWorktree: boolean; deletedBranch: boolean }> {
  const removed = await gitRetrying(repoRoot, ['worktree', 'remove', '--force', '--', opts.path]);
  let removedWorktree = removed.exitCode === 0;
  if (!removedWorktree) {
    if (/locked working tree/.test(removed.stderr)) {
      throw new AgentboxError('WORKTREE_FAILED', `the worktree ${opts.path} is locked`, {
        hint: `someone locked it on purpose; if it can go, run "git worktree unlock ${opts.path}" and try again`,
      });
    }
    if (!/is not a working tree|does not exist/.test(removed.stderr)) {
      throw new AgentboxError(
        'WORKTREE_FAILED',
        `cannot remove the worktree ${opts.path}: ${firstLine(removed)}`,
        {
          hint: `run "git worktree remove --force ${opts.path}" to see git's full message`,
        },
      );
    }
    // Its folder may have been deleted by hand: forget what git still records about it.
    const pruned = await gitRetrying(repoRoot, ['worktree', 'prune']);
    if (pruned.exitCode !== 0) throw gitFailed(['worktree', 'prune'], repoRoot, pruned);
    removedWorktree = false;
  }
  if (!opts.deleteBranch || !opts.branch) return { removedWorktree, deletedBranch: false };
  const deleted = await gitRetrying(repoRoot, ['branch', '-D', '--', opts.branch]);
  if (deleted.exitCode === 0) return { removedWorktree, deletedBranch: true };
  if (/not found/.test(deleted.stderr)) return { removedWorktree, deletedBranch: false };
  throw new AgentboxError(
    'WORKTREE_FAILED',
    `cannot delete the branch ${opts.branch}: ${firstLine(deleted)}`,
    {
      hint: /checked out at/.test(deleted.stderr)
        ? 'another worktree has it checked out: "git worktree list" shows which'
        : `run "git branch -D ${opts.branch}" to see git's full message`,
    },
  );
}

/** Messages of a git that lost a race for a lock (or read a sibling worktree half written). */
const TRANSIENT = [
  /Unable to create '[^']*\.lock': File exists/,
  /cannot lock ref/,
  /could not lock config file/,
  /failed to read .*commondir/,
  // Another worktree's admin folder removed while this git listed them (parallel removes).
  /Invalid path '[^']*[\\/]worktrees[\\/][^']*': No such file or directory/,
];

export function isTransientGitError(stderr: string): boolean {
  return TRANSIENT.some((pattern) => pattern.test(stderr));
}

/** Full-jitter exponential backoff: 0..10 ms, 0..20 ms, ... capped at 320 ms. Pure. */
export function backoffMs(attempt: number, random: number): number {
  return Math.round(random * Math.min(320, 10 * 2 ** (attempt - 1)));
}

const TRIES = 10;

/**
 * Every filter driver of the person's config switched off, when the base is not the commit checked
 * out here (a group's attempt started after HEAD moved; a base from another's branch): such a tree
 * may be someone else's, and its .gitattributes can hand its files to a driver of the person's
 * whose program runs that tree's scripts (`sh scripts/smudge.sh`); merge switches them off the
 * same way (src/gate/merge-git.ts). The person's own HEAD keeps their filters (git-lfs content,
 * not pointers). null: nothing to switch off.
 */
async function foreignBaseFilters(repoRoot: string, branch: string): Promise<GitSettings | null> {
  const filters = await personFiltersOff({ cwd: repoRoot });
  if (filters.length === 0) return null;
  const at = await runGit(['rev-parse', 'HEAD^{commit}', `refs/heads/${branch}^{commit}`], {
    cwd: repoRoot,
  });
  const [head, base] = at.stdout.split('\n');
  return at.exitCode === 0 && head === base ? null : filters;
}

async function gitRetrying(
  cwd: string,
  args: string[],
  config: GitSettings | null = null,
): Promise<GitResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runGit(args, { cwd, ...(config ? { config } : {}) });
    if (result.exitCode === 0 || attempt >= TRIES || !isTransientGitError(result.stderr)) return result;
    await sleep(backoffMs(attempt, Math.random()));
  }
}

async function branchError(repoRoot: string, branch: string, base: string, stderr: string) {
  if (/already exists/.test(stderr)) {
    return new AgentboxError('BRANCH_EXISTS', `the branch ${branch} already exists`, {
      hint: `choose another name, or delete the old branch if nothing needs it: git branch -D ${branch}`,
    });
  }
  if (/not a valid branch name/.test(stderr)) {
    return new AgentboxError('WORKTREE_FAILED', `not a valid branch name: ${branch}`, {
      hint: `"git check-ref-format --branch ${branch}" explains what git accepts`,
    });
  }
  if (/not a valid (object name|branch point)|is a tree|is a blob/.test(stderr)) {
    if ((await headSha(repoRoot)) === null) {
      return new AgentboxError('NO_COMMITS', `the repository ${repoRoot} has no commits yet`, {
        hint: 'agentbox fix needs at least one commit — commit your work first (git add -A && git commit)',
      });
    }
    return new AgentboxError('BAD_REVISION', `not a commit: ${base}`, {
      hint: 'start from a branch, tag or commit sha ("git log --oneline" lists commits)',
    });
  }
  return new AgentboxError('WORKTREE_FAILED', `cannot create the branch ${branch}: ${stderr.trim()}`, {
    hint: `run "git branch ${branch} ${base}" to see git's full message`,
  });
}

function isEmptyOrMissing(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length === 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function pathExists(target: string): AgentboxError {
  return new AgentboxError('PATH_EXISTS', `cannot create a worktree at ${target}: it already exists`, {
    hint: `remove it first if nothing in it is needed (rm -r ${target}), or choose another path`,
  });
}

function firstLine(result: GitResult): string {
  const text = result.stderr.trim() || `exit code ${result.exitCode}`;
  return text.split('\n')[0]!.replace(/^(fatal|error): /, '');
}

function gitFailed(args: string[], repoRoot: string, result: GitResult): GitError {
  return new GitError(
    args,
    { cwd: repoRoot, hint: 'check that git works there ("git status"), then try again' },
    result,
  );
}
