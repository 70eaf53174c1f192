import fs from 'node:fs';
import path from 'node:path';
import { git } from './exec.js';

/**
 * A fix run's own git repository for the agent: `GIT_DIR` in its environment points here, with
 * `GIT_WORK_TREE` its worktree. It borrows the main repository's objects read-only (alternates)
 * and starts on the worktree's commit and index, so `git status/diff/log/add/commit` work as in
 * any checkout; commits, refs, config and hooks all land here. The main repository's git dir is
 * read-only to the sandbox, so an agent that unsets GIT_DIR (or names the main one) can read it
 * and change nothing. agentbox never runs git against this folder.
 */
export interface PrivateGit {
  readonly gitDir: string;
  readonly branch: string;
}

/** A worktree's git: the repository's common dir, the worktree's own admin dir, its HEAD commit. */
export interface WorktreeGit {
  readonly commonDir: string;
  readonly gitDir: string;
  readonly head: string;
}

const callIn = (worktree: string) => ({ cwd: worktree, vars: { GIT_CONFIG_NOSYSTEM: '1' } });

/** One `git rev-parse` for all three (the run's set-up asked three times, twice the same). */
export async function worktreeGit(worktree: string): Promise<WorktreeGit> {
  const info = await git(['rev-parse', '--git-common-dir', '--git-dir', 'HEAD'], callIn(worktree));
  const [common, own, head] = info.split('\n');
  return { commonDir: path.resolve(worktree, common!), gitDir: path.resolve(worktree, own!), head: head! };
}

export async function createPrivateGit(opts: {
  readonly worktree: string;
  readonly gitDir: string;
  readonly branch: string;
  /** The worktree's git when the caller has read it already. */
  readonly info?: WorktreeGit;
}): Promise<PrivateGit> {
  const { worktree, gitDir, branch } = opts;
  const [{ commonDir, gitDir: worktreeGitDir, head }, refs] = await Promise.all([
    opts.info ?? worktreeGit(worktree),
    git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], callIn(worktree)),
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
  fs.writeFileSync(path.join(gitDir, 'HEAD'), `ref: refs/heads/${branch}\n`);
  // The main repository's own config first (identity, aliases, attributes the person set up), then
  // what this repository is; the agent's changes to it stay here.
  fs.writeFileSync(
    path.join(gitDir, 'config'),
    `[include]\n\tpath = ${JSON.stringify(path.join(commonDir, 'config'))}\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true\n`,
  );
  // The main repository's branches and tags, read-only copies, so `git diff main` works; the run's
  // own branch is the one loose ref.
  const packed = refs
    .split('\n')
    .filter((line) => line && !line.endsWith(` refs/heads/${branch}`))
    .join('\n');
  fs.writeFileSync(
    path.join(gitDir, 'packed-refs'),
    `# pack-refs with: peeled sorted \n${packed}${packed ? '\n' : ''}`,
  );
  const ref = path.join(gitDir, 'refs', 'heads', branch);
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  fs.writeFileSync(ref, `${head}\n`);
  const index = path.join(worktreeGitDir, 'index');
  if (fs.existsSync(index)) fs.copyFileSync(index, path.join(gitDir, 'index'));
  return { gitDir, branch };
}
