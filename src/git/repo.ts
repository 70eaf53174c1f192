import fs from 'node:fs';
import path from 'node:path';
import { simpleGit } from 'simple-git';
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
 * Finds the repository around `cwd`. The ledger always belongs to the main working tree, so a
 * command run inside a fix run's worktree still finds the same `.agents/`.
 */
export async function findRepo(cwd: string): Promise<Repo> {
  if (!fs.existsSync(cwd)) {
    throw new AgentboxError('NOT_A_GIT_REPO', `folder does not exist: ${cwd}`, {
      hint: 'cd into your repository, or pass an existing folder with -C <dir>',
    });
  }
  const git = simpleGit({ baseDir: cwd });
  let out: string;
  try {
    out = await git.raw(['rev-parse', '--path-format=absolute', '--is-bare-repository', '--git-common-dir']);
  } catch {
    throw new AgentboxError('NOT_A_GIT_REPO', `not a git repository: ${cwd}`, {
      hint: 'run "git init" first, or cd into your repo',
    });
  }
  const [bare, commonRaw] = out.trim().split('\n');
  if (bare === 'true' || commonRaw === undefined) {
    throw new AgentboxError('BARE_REPO', `a bare repository has no working tree: ${cwd}`, {
      hint: 'agentbox works on a checkout: clone it (git clone <bare> <dir>) and run agentbox in <dir>',
    });
  }
  let worktreeRoot: string;
  try {
    worktreeRoot = (await git.raw(['rev-parse', '--show-toplevel'])).trim();
  } catch {
    throw new AgentboxError('BARE_REPO', `this is inside a git folder with no working tree: ${cwd}`, {
      hint: 'cd into the working tree of your repository',
    });
  }
  const commonDir = fs.realpathSync(commonRaw);
  const root = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : worktreeRoot;
  return { root: fs.realpathSync(root), worktreeRoot: fs.realpathSync(worktreeRoot), commonDir };
}
