import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode } from '../errors.js';
import { ownerEnv } from '../process/owner.js';
import { inertEnv } from './inert.js';

export interface Repo {
  /** The main working tree's root (also when called from inside a linked worktree). */
  readonly root: string;
  /** The working tree the command was called from (differs from root inside a worktree). */
  readonly worktreeRoot: string;
  /** The shared .git folder (where info/exclude and the worktree list live). */
  readonly commonDir: string;
}

/**
 * NOTE: the one git call outside src/git/exec.ts, a measured fast path: every command starts
 * here, and loading execa costs 70-90 ms on a 2-core machine (node -e 0 is ~70 ms), which
 * `agentbox status` would pay for this one call. Only stdout and the exit are read. node:child_process
 * itself is loaded here, not imported (~2 ms): the plain layouts never need it.
 */
async function git(
  args: string[],
  cwd: string,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<{ ok: boolean; stdout: string }> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile('git', args, { cwd, encoding: 'utf8', env: inertEnv(env ?? ownerEnv()) }, (error, stdout) =>
      resolve({ ok: !error, stdout }),
    );
  });
}

/** Throws a clear error when `cwd` (the -C folder) is missing or not a folder. */
export function checkFolder(cwd: string): void {
  const stat = statOrNull(cwd);
  if (!stat) {
    throw new AgentboxError('NOT_A_GIT_REPO', `folder does not exist: ${cwd}`, {
      hint: 'cd into your repository, or pass an existing folder with -C <dir>',
    });
  }
  if (!stat.isDirectory()) {
    throw new AgentboxError('NOT_A_GIT_REPO', `not a folder: ${cwd}`, {
      hint: 'pass the folder of your repository (or one inside it) with -C <dir>, not a file',
    });
  }
}

/** Variables that change where git looks for a repository: with any of them set, git is asked. */
const DISCOVERY_VARS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_CEILING_DIRECTORIES'] as const;

/**
 * Finds the repository around `cwd`. The ledger always belongs to the main working tree, so a
 * command run inside a fix run's worktree still finds the same `.agents/`. Given the environment,
 * the plain layouts git makes are read from disk (see findOnDisk); anything else asks git.
 */
export async function findRepo(
  cwd: string,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<Repo> {
  checkFolder(cwd);
  if (env && DISCOVERY_VARS.every((name) => !env[name])) {
    const found = findOnDisk(cwd);
    if (found) return found;
  }
  const info = await git(
    ['rev-parse', '--path-format=absolute', '--is-bare-repository', '--git-common-dir', '--show-toplevel'],
    cwd,
    env,
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

/** What is at `file`, or null when nothing is (a file on the way, `a.txt/sub`, too). */
function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return null;
    throw error;
  }
}

/** The folder's own files, or undefined when it cannot be read. */
function readSmall(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The repository from the folders alone, for the two layouts git itself makes: a working tree
 * with its `.git` folder, and a linked worktree whose `.git` file points into the main one's
 * `.git/worktrees/`. NOTE: `git rev-parse` costs ~8 ms of process start on every command; this
 * costs a few stat calls. Anything unusual (inside a .git folder, a submodule, core.worktree,
 * another owner's repository, which git would refuse) returns undefined and git decides.
 */
export function findOnDisk(cwd: string): Repo | undefined {
  const start = fs.realpathSync(cwd);
  if (start.split(path.sep).includes('.git')) return undefined;
  for (let dir = start; ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git');
    const stat = fs.lstatSync(dotGit, { throwIfNoEntry: false });
    if (stat) return layoutOf(dir, dotGit, stat);
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** core.worktree moves the working tree; core.bare = true means there is none: git decides then. */
const UNUSUAL_CONFIG = /^\s*(worktree\s*=|bare\s*=\s*true)/im;

function realOrSelf(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return file;
  }
}

function layoutOf(dir: string, dotGit: string, stat: fs.Stats): Repo | undefined {
  if (process.getuid && stat.uid !== process.getuid()) return undefined;
  if (stat.isDirectory()) {
    const config = readSmall(path.join(dotGit, 'config'));
    if (!fs.existsSync(path.join(dotGit, 'HEAD')) || config === undefined) return undefined;
    if (UNUSUAL_CONFIG.test(config) || fs.existsSync(path.join(dotGit, 'commondir'))) return undefined;
    return { root: dir, worktreeRoot: dir, commonDir: dotGit };
  }
  if (!stat.isFile()) return undefined;
  const pointer = /^gitdir: (.+)$/m.exec(readSmall(dotGit) ?? '')?.[1];
  if (!pointer) return undefined;
  const gitDir = realOrSelf(path.resolve(dir, pointer.trim()));
  const common = readSmall(path.join(gitDir, 'commondir'));
  if (common === undefined) return undefined;
  const commonDir = realOrSelf(path.resolve(gitDir, common.trim()));
  if (path.basename(commonDir) !== '.git' || path.dirname(path.dirname(gitDir)) !== commonDir)
    return undefined;
  const main = path.dirname(commonDir);
  const config = readSmall(path.join(commonDir, 'config'));
  if (config === undefined || UNUSUAL_CONFIG.test(config)) return undefined;
  return { root: main, worktreeRoot: dir, commonDir };
}
