import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import { createPrivateGit, type WorktreeGit, worktreeGit } from '../git/private.js';
import { findOnDisk } from '../git/repo.js';
import { probeSandbox, probeVerifySandbox, type SandboxEnv, type SandboxProbe } from './available.js';
import { readFence } from './fence.js';
import { ignoredEntries } from './ignored.js';
import { absentBefore, type LeftoverShare, leftoverCandidates, releaseLeftovers } from './leftovers.js';
import { createPrivateArea, type PrivateArea, privateBase } from './private.js';
import { writeRunGitconfig } from './run-gitconfig.js';
import { RUNTIME_WRITABLE } from './settings.js';

/**
 * Fail closed: a headless run (a fix run runs shell commands without asking; a read-only run's
 * "read-only" commands could read the ledger and the person's secrets) starts only where Claude
 * Code's sandbox works, unless the person opted out in agentbox.yaml (`sandbox.mode: off`).
 * Checked before any run folder exists.
 */
export function assertSandboxUsable(
  env: SandboxEnv,
  config: Config['sandbox'],
  type = 'fix',
  /** The probe's outcome when it was started earlier (probeSandboxAsync); else it runs now. */
  probed?: SandboxProbe,
): void {
  if (config.mode === 'off') return;
  const probe = probed ?? probeSandbox(env);
  if (!probe.ok) {
    throw new AgentboxError(
      'SANDBOX_UNAVAILABLE',
      `${type} runs need Claude Code's sandbox, and it cannot work here: ${probe.problem}`,
      {
        hint: `${probe.fix}; or, where this machine is itself the sandbox, opt out in agentbox.yaml (sandbox: { mode: off }), or for one CI job or container with AGENTBOX_SANDBOX=container in its environment. agentbox doctor checks this`,
      },
    );
  }
}

/**
 * runs.verify and runs.setup run in the sandbox runtime: a fix run with one refuses to start where
 * that cannot work.
 */
export function assertVerifyUsable(
  env: SandboxEnv,
  config: Config['sandbox'],
  verify: string | null,
  key: 'runs.verify' | 'runs.setup' = 'runs.verify',
): void {
  if (!verify || config.mode === 'off') return;
  const probe = probeVerifySandbox(env);
  if (!probe.ok) {
    throw new AgentboxError('SANDBOX_UNAVAILABLE', `${key} ("${verify}") cannot run: ${probe.problem}`, {
      hint: `${probe.fix}. agentbox doctor checks this`,
    });
  }
}

/**
 * The folders the sandbox runtime opens for writing by itself, made first where missing so they
 * can be denied: only an existing path can be (see src/sandbox/settings.ts), and the runtime makes
 * `~/.npm/_logs` during the run when it is missing (measured: it was then writable). Both are the
 * tools' own log folders; one that cannot be made (a read-only home) is not opened either.
 */
function runtimeFolders(env: SandboxEnv): string[] {
  const wanted = RUNTIME_WRITABLE.map((p) => path.join(env.HOME ?? '/', p));
  for (const dir of wanted) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // Not ours to make: left out below.
    }
  }
  return wanted.filter((p) => fs.existsSync(p));
}

/** Where a fix run's commands may write: its worktree, its private git dir and its temp dir. */
export function fixWritable(worktree: string, box: RunSandbox): string[] {
  return [worktree, box.gitDir, box.tmpDir, box.sockDir];
}

/**
 * The repository's git dir, real path: read from disk for the layouts git makes (a few stat
 * calls), else asked of git. NOTE: a git process here was ~8 ms of every run's start before claude.
 */
async function commonGitDir(repoRoot: string): Promise<string> {
  const onDisk = findOnDisk(repoRoot)?.commonDir;
  const common = onDisk ?? (await git(['rev-parse', '--git-common-dir'], { cwd: repoRoot })).trim();
  return fs.realpathSync(path.resolve(repoRoot, common));
}

/** Where a run's settings (they carry the token) and the hook script's address book go. */
export interface RunSecrets {
  readonly root: string;
  readonly settingsFile: string;
  readonly hookFile: string;
  /** The model API key of a fenced run, which claude reads through apiKeyHelper (src/claude/model-key.ts). */
  readonly keyFile: string;
}

/** What the sandbox of a run must fence. Paths exist (see src/sandbox/settings.ts). */
export interface RunSandbox {
  /** The agent's private git dir (src/git/private.ts): a fix run's writable, a read-only run's not. */
  readonly gitDir: string;
  readonly tmpDir: string;
  /** claude's and the sandbox runtime's own TMPDIR, short enough for their sockets (PrivateArea.sockDir). */
  readonly sockDir: string;
  /** The run's global git config (GIT_CONFIG_GLOBAL): the person's identity, none of their credentials. */
  readonly gitConfig: string;
  readonly mainGitDir: string;
  /** Reads are denied by default: the regions and credentials denied, the paths opened inside them. */
  readonly denyRead: readonly string[];
  /**
   * The entries of `denyRead` listed one by one around a read-only run's repository (carveTo): any
   * may be gone by the time a command runs, so Claude Code gets each as a glob matching only itself
   * (selfGlob), which it skips when nothing matches.
   */
  readonly listed: readonly string[];
  /** A fix run's main working tree, hidden from the agent, opened to runs.setup only; null otherwise. */
  readonly mainTree: string | null;
  readonly allowRead: readonly string[];
  /** What Anthropic's sandbox runtime makes writable by itself, denied where it exists (RUNTIME_WRITABLE). */
  readonly runtimeWritable: readonly string[];
  readonly allowedDomains: readonly string[];
}

export interface RunPrivacy {
  readonly area: PrivateArea;
  readonly secrets: RunSecrets;
  /** null: no sandbox (a person's session, or the person opted out). */
  readonly sandbox: RunSandbox | null;
}

/**
 * A read-only run has no worktree: its only writable place is its temp dir. Its git (made by
 * prepareRunPrivacy) is a private one all the same, read-only, on the repository's tree
 * (GIT_WORK_TREE): the repository's own config is not readable to it (a token in a remote URL), and
 * git cannot work without its config.
 */
function readOnlyFence(
  opts: Parameters<typeof readFence>[0] & { readonly leftovers?: LeftoverShare },
  area: PrivateArea,
  places: Omit<Parameters<typeof readFence>[2], 'fix'>,
  fence: Omit<RunSandbox, 'gitDir' | 'mainTree' | 'denyRead' | 'allowRead' | 'listed'>,
): RunSandbox {
  const { mainGitDir } = places;
  const leftovers = absentBefore(
    leftoverCandidates({ repoRoot: opts.repoRoot, mainGitDir, worktree: null, worktreeGitDir: null }),
  );
  area.onDispose(() => releaseLeftovers(leftovers, opts.leftovers));
  const reads = readFence(opts, area, { ...places, fix: null });
  return { ...fence, ...reads, gitDir: area.gitDir, mainTree: null };
}

/** A fix run's: its worktree and admin folder (`adminDir`) opened, the main tree hidden. */
function fixFence(
  opts: Parameters<typeof readFence>[0] & { readonly worktree: string; readonly leftovers?: LeftoverShare },
  area: PrivateArea,
  places: Omit<Parameters<typeof readFence>[2], 'fix'>,
  fence: Omit<RunSandbox, 'gitDir' | 'mainTree' | 'denyRead' | 'allowRead' | 'listed'>,
  adminDir: string,
): RunSandbox {
  const { repoRoot, worktree } = opts;
  const { mainGitDir } = places;
  const leftovers = absentBefore(
    leftoverCandidates({ repoRoot, mainGitDir, worktree, worktreeGitDir: adminDir }),
  );
  area.onDispose(() => releaseLeftovers(leftovers, opts.leftovers));
  const reads = readFence(opts, area, { ...places, fix: { worktree, adminDir } });
  return { ...fence, ...reads, gitDir: area.gitDir, mainTree: fs.realpathSync(repoRoot) };
}

/** The branch the repository has checked out (`.git/HEAD`), or its commit when detached. */
function currentBranch(info: WorktreeGit): string | { readonly detached: string | null } {
  try {
    const head = fs.readFileSync(path.join(info.gitDir, 'HEAD'), 'utf8').trim();
    if (head.startsWith('ref: refs/heads/')) return head.slice('ref: refs/heads/'.length);
    if (/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(head)) return { detached: head };
  } catch {
    // Another ref format (reftable): the commit.
  }
  return { detached: info.head };
}

/**
 * A read-only run's repository git, from the folders alone when it is a working tree with its own
 * `.git` folder (findOnDisk: no `git rev-parse` on the way to claude); else asked of git.
 */
function repositoryGit(repoRoot: string): WorktreeGit | Promise<WorktreeGit> {
  const found = findOnDisk(repoRoot);
  if (found && found.worktreeRoot === found.root && found.root === fs.realpathSync(repoRoot))
    return { commonDir: found.commonDir, gitDir: found.commonDir, head: null };
  return worktreeGit(repoRoot);
}

/** Where the run's secrets go in its private area (the agent cannot read them). */
const secretFiles = (area: PrivateArea): RunSecrets => ({
  root: area.secretsRoot,
  settingsFile: path.join(area.secretsDir, 'settings.json'),
  hookFile: path.join(area.secretsDir, 'hook.json'),
  keyFile: path.join(area.secretsDir, 'model-key'),
});

/**
 * The run's private area (secrets, the agent's git and temp dir) and, for a fix run with the
 * sandbox on, what the sandbox must fence. Dispose `area` when the run ends.
 */
export async function prepareRunPrivacy(opts: {
  readonly env: SandboxEnv;
  readonly runName: string;
  readonly repoRoot: string;
  readonly worktree: string | null;
  /** Whether the run's shell is fenced: every headless run (fix, scout, plan, review), not a session. */
  readonly fenced: boolean;
  readonly config: Config['sandbox'];
  /** The repository's other runs, who may still need its mount points (leftovers.ts). */
  readonly leftovers?: LeftoverShare;
}): Promise<RunPrivacy> {
  const area = createPrivateArea(privateBase(opts.env, process.getuid?.() ?? 0), opts.runName);
  const secrets = secretFiles(area);
  if (!opts.fenced || opts.config.mode === 'off') return { area, secrets, sandbox: null };
  try {
    // NOTE: the main git dir is asked of the repository, never of the worktree, whose `.git` file
    // an agent of an earlier turn could have pointed elsewhere; the worktree's own git is read
    // once, for its admin dir and the private git (createPrivateGit), at the same time.
    // The private git is made as soon as the worktree's git is known, beside the run's git config:
    // one round of git on the way to claude, not two.
    const known = Promise.resolve(opts.worktree ? worktreeGit(opts.worktree) : repositoryGit(opts.repoRoot));
    const [mainGitDir, info, gitConfig, , ignored] = await Promise.all([
      commonGitDir(opts.repoRoot),
      known,
      writeRunGitconfig(area.workDir, opts.repoRoot, opts.env),
      known.then((found) =>
        createPrivateGit({
          worktree: opts.worktree ?? opts.repoRoot,
          gitDir: area.gitDir,
          branch: opts.worktree ? `agentbox/${opts.runName}` : currentBranch(found),
          info: found,
        }),
      ),
      opts.worktree ? null : ignoredEntries(opts.repoRoot),
    ]);
    const runtimeWritable = runtimeFolders(opts.env);
    const places = { mainGitDir, tmpDir: area.tmpDir, sockDir: area.sockDir, gitConfig, gitDir: area.gitDir };
    const { gitDir: _, ...shared } = places;
    const fence = { ...shared, runtimeWritable, allowedDomains: opts.config.allowed_domains };
    if (!opts.worktree) {
      const sandbox = readOnlyFence({ ...opts, ignored: ignored ?? [] }, area, places, fence);
      return { area, secrets, sandbox };
    }
    return {
      area,
      secrets,
      sandbox: fixFence({ ...opts, worktree: opts.worktree }, area, places, fence, info.gitDir),
    };
  } catch (error) {
    area.dispose();
    throw error;
  }
}
