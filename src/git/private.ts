import fs from 'node:fs';
import path from 'node:path';
import { agentGitConfig } from './agent-config.js';
import { git, prefetchGit } from './exec.js';

/**
 * A fix run's own git repository for the agent: `GIT_DIR` in its environment points here, with
 * `GIT_WORK_TREE` its worktree. It borrows the main repository's objects read-only (alternates)
 * and starts on the worktree's commit and index, so `git status/diff/log/add/commit` work as in
 * any checkout; commits, refs, config and hooks all land here. The main repository's git dir is
 * read-only to the sandbox, so an agent that unsets GIT_DIR (or names the main one) can read it
 * and change nothing; its config is not readable at all (agent-config.ts says why and what of it
 * this one carries). agentbox never runs git against this folder.
 */
export interface PrivateGit {
  readonly gitDir: string;
  readonly branch: string | { readonly detached: string | null };
}

/** A worktree's git: the repository's common dir, the worktree's own admin dir, its HEAD commit. */
export interface WorktreeGit {
  readonly commonDir: string;
  readonly gitDir: string;
  readonly head: string | null;
}

const callIn = (worktree: string) => ({ cwd: worktree, vars: { GIT_CONFIG_NOSYSTEM: '1' } });

/** The branches and tags the private git carries. */
const REFS = ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'];
/** The repository's own config as it is in its file, includes not followed (they are not read). */
const LOCAL_CONFIG = ['config', '--local', '--list', '-z'];

/**
 * The reads createPrivateGit will make of `worktree`, started now: a read-only run's start asks
 * them while it reads its configuration (src/git/prefetch.ts), not after.
 */
export function prefetchPrivateGit(worktree: string): void {
  prefetchGit(REFS, callIn(worktree));
  prefetchGit(LOCAL_CONFIG, callIn(worktree));
}

/**
 * One `git rev-parse` for all three (the run's set-up asked three times, twice the same). A
 * repository without a commit yet (a scout's) has no HEAD commit: `head` is null.
 */
export async function worktreeGit(worktree: string): Promise<WorktreeGit> {
  const dirs = ['rev-parse', '--git-common-dir', '--git-dir'];
  const info = await git([...dirs, 'HEAD'], callIn(worktree)).catch(async (error) => {
    if (!/unknown revision|ambiguous argument 'HEAD'/.test(String(error))) throw error;
    return git(dirs, callIn(worktree));
  });
  const [common, own, head] = info.split('\n');
  return {
    commonDir: path.resolve(worktree, common!),
    gitDir: path.resolve(worktree, own!),
    head: head || null,
  };
}

export async function createPrivateGit(opts: {
  readonly worktree: string;
  readonly gitDir: string;
  /** The branch HEAD names (its ref is the worktree's commit), or a detached HEAD's commit. */
  readonly branch: string | { readonly detached: string | null };
  /** The worktree's git when the caller has read it already. */
  readonly info?: WorktreeGit;
}): Promise<PrivateGit> {
  const { worktree, gitDir, branch } = opts;
  const [{ commonDir, gitDir: worktreeGitDir, head }, refs, listing] = await Promise.all([
    opts.info ?? worktreeGit(worktree),
    git(REFS, callIn(worktree)),
    git(LOCAL_CONFIG, callIn(worktree)),
  ]);
  // Built from nothing before the agent starts: plain writes, nothing is replaced or read meanwhile.
  fs.rmSync(gitDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true });
  fs.mkdirSync(path.join(gitDir, 'refs', 'heads'), { recursive: true });
  fs.mkdirSync(path.join(gitDir, 'refs', 'tags'), { recursive: true });
  fs.writeFileSync(
    path.join(gitDir, 'objects', 'info', 'alternates'),
    `${path.join(commonDir, 'objects')}\n`,
  );
  const named = typeof branch === 'string' ? branch : null;
  const detached = typeof branch === 'string' ? null : (branch.detached ?? head);
  fs.writeFileSync(path.join(gitDir, 'HEAD'), named ? `ref: refs/heads/${named}\n` : `${detached}\n`);
  // What the agent may know of the repository's config (agent-config.ts): not its tokens.
  fs.writeFileSync(path.join(gitDir, 'config'), agentGitConfig(listing));
  // The main repository's branches and tags, read-only copies, so `git diff main` works; the run's
  // own branch is the one loose ref.
  // (A read-only run's caller may not know the commit: then the branch stays in packed-refs.)
  const loose = named && head ? named : null;
  const packed = refs
    .split('\n')
    .filter((line) => line && !(loose && line.endsWith(` refs/heads/${loose}`)))
    .join('\n');
  fs.writeFileSync(
    path.join(gitDir, 'packed-refs'),
    `# pack-refs with: peeled sorted \n${packed}${packed ? '\n' : ''}`,
  );
  if (loose) {
    const ref = path.join(gitDir, 'refs', 'heads', loose);
    fs.mkdirSync(path.dirname(ref), { recursive: true });
    fs.writeFileSync(ref, `${head}\n`);
  }
  const index = path.join(worktreeGitDir, 'index');
  if (fs.existsSync(index)) fs.copyFileSync(index, path.join(gitDir, 'index'));
  return { gitDir, branch };
}
