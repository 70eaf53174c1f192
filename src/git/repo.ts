import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';

export interface Repo {
  /** The main working tree's root (also when called from inside a linked worktree). */
  readonly root: string;
  /** The working tree the command was called from (differs from root inside a worktree). */
  readonly worktreeRoot: string;
  /** The shared .git folder (where info/exclude and the worktree list live). */
  readonly commonDir: string;
}

/**
 * NOTE: plain execFile, not simple-git: every command starts here, and simple-git costs ~20 ms
 * to import plus a 50 ms exit-delay timer per call, a third of `agentbox status`'s budget.
 */
function git(args: string[], cwd: string): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, encoding: 'utf8' }, (error, stdout) => resolve({ ok: !error, stdout }));
  });
}

/**
 * Finds the repository around `cwd`. The ledger always belongs to the main working tree, so a
 * command run inside a fix run's worktree still finds the same `.agents/`.
 */
export async function findRepo(cwd: string): Promise<Repo> {
  if (!fs.existsSync(cwd)) {
    throw new AgentboxError('NOT_A_GIT_REPO', `folder does not exist: ${cwd}`, {
      hint: 'cd into your repository, or pass an existing folder with -C <dir>',
    });
  }
  const info = await git(
    ['rev-parse', '--path-format=absolute', '--is-bare-repository', '--git-common-dir', '--show-toplevel'],
    cwd,
  );
  const [bare, commonRaw, top] = info.stdout.trim().split('\n');
  if (bare === 'true') {
    throw new AgentboxError('BARE_REPO', `a bare repository has no working tree: ${cwd}`, {
      hint: 'agentbox works on a checkout: clone it (git clone <bare> <dir>) and run agentbox in <dir>',
    });
  }
  // NOTE: rev-parse prints the answers it can before failing, so a bare repository or the inside
  // of a .git folder still reports the first two lines with a non-zero exit.
  if (commonRaw === undefined || (bare !== 'false' && !info.ok)) {
    throw new AgentboxError('NOT_A_GIT_REPO', `not a git repository: ${cwd}`, {
      hint: 'run "git init" first, or cd into your repo',
    });
  }
  if (!top) {
    throw new AgentboxError('BARE_REPO', `this is inside a git folder with no working tree: ${cwd}`, {
      hint: 'cd into the working tree of your repository',
    });
  }
  const commonDir = fs.realpathSync(commonRaw);
  const worktreeRoot = fs.realpathSync(top);
  const root = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : worktreeRoot;
  return { root: fs.realpathSync(root), worktreeRoot, commonDir };
}
