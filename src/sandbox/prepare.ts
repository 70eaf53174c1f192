import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../airlock/paths.js';
import type { Config } from '../config/schema.js';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import { createPrivateGit, worktreeGit } from '../git/private.js';
import { agentboxStateDir } from '../util/state-dir.js';
import { probeSandbox, probeVerifySandbox, type SandboxEnv } from './available.js';
import { absentBefore, leftoverCandidates, removeEmpty } from './leftovers.js';
import { createPrivateArea, type PrivateArea, privateBase } from './private.js';
import { HOME_SECRETS, homePath, homeRegions, READ_ALLOWLIST, type ReadFence } from './read-allowlist.js';
import { RUNTIME_WRITABLE } from './settings.js';

/**
 * Fail closed: a headless run (a fix run runs shell commands without asking; a read-only run's
 * "read-only" commands could read the ledger and the person's secrets) starts only where Claude
 * Code's sandbox works, unless the person opted out in agentbox.yaml (`sandbox.mode: off`).
 * Checked before any run folder exists.
 */
export function assertSandboxUsable(env: SandboxEnv, config: Config['sandbox'], type = 'fix'): void {
  if (config.mode === 'off') return;
  const probe = probeSandbox(env);
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

/** `~/x` → `<home>/x`; other relative paths are relative to the repository. */
function expand(p: string, home: string | undefined, repoRoot: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(home ?? '/', p.slice(1));
  return path.resolve(repoRoot, p);
}

/** The paths of `wanted` that exist, symlinks resolved (the guard compares real paths), once each. */
function existing(wanted: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of wanted) {
    try {
      out.add(fs.realpathSync(p));
    } catch {
      // Missing: nothing to deny or open (see src/sandbox/settings.ts).
    }
  }
  return [...out];
}

/** What a run works on: the repository (a read-only run) or its worktree (a fix run). */
interface RunPlaces {
  readonly mainGitDir: string;
  readonly tmpDir: string;
  /** A fix run's worktree, its own admin folder in the main git dir and its private git dir. */
  readonly fix: { readonly worktree: string; readonly adminDir: string; readonly gitDir: string } | null;
}

/**
 * The run's read fence (src/sandbox/read-allowlist.ts): reads are denied by default. Denied: the
 * person's home and its XDG folders and Claude Code's config dir (regions), every run's private
 * area, the folder holding this repository's run worktrees, the other worktrees' admin folders,
 * and, even inside what is opened, the credentials (HOME_SECRETS), `sandbox.deny_read`, every
 * run's secrets and agentbox's state. Opened again: the table's toolchains and caches, the PATH
 * folders in the home, the person's `sandbox.allow_read`, and what the run works on (the
 * repository, and a fix run's worktree, its admin folder and private git).
 */
function readFence(
  opts: { readonly env: SandboxEnv; readonly repoRoot: string; readonly config: Config['sandbox'] },
  area: PrivateArea,
  places: RunPlaces,
): ReadFence {
  const { env } = opts;
  const regions = homeRegions(env);
  const secrets = HOME_SECRETS.map((p) => homePath(p, env));
  const { fix } = places;
  const denyRead = existing([
    ...regions,
    path.dirname(area.secretsRoot),
    // A fix run works on its worktree, not on the main tree: the main tree's untracked and ignored
    // files (a .env, a local config) are the person's, not the commit's. Its git dir stays open.
    ...(fix ? [opts.repoRoot, path.dirname(fix.worktree), path.join(places.mainGitDir, 'worktrees')] : []),
    ...secrets,
    ...opts.config.deny_read.map((p) => expand(p, env.HOME, opts.repoRoot)),
    area.secretsRoot,
    agentboxStateDir(env),
  ]);
  // PATH's folders in the home (~/.local/bin, ~/.cargo/bin): the commands the run is expected to use.
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir) && !regions.includes(dir))
    .filter((dir) => regions.some((r) => isInside(dir, r)) && !secrets.some((s) => isInside(dir, s)));
  const allowRead = existing([
    ...READ_ALLOWLIST.map((row) => homePath(row.path, env)),
    ...onPath,
    ...opts.config.allow_read.map((p) => expand(p, env.HOME, opts.repoRoot)),
    // A read-only run works on the repository itself; a fix run only on its git (its objects).
    // runs.setup, which copies ignored folders from the main tree ($AGENTBOX_REPO_ROOT/node_modules),
    // is opened the main tree by its own fence (setupSandbox); the ledger stays denied.
    ...(fix ? [] : [opts.repoRoot]),
    places.mainGitDir,
    ...(fix ? [fix.worktree, fix.adminDir, fix.gitDir] : []),
    places.tmpDir,
  ]);
  return { denyRead, allowRead };
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
  return [worktree, ...(box.gitDir ? [box.gitDir] : []), box.tmpDir];
}

/** Where a run's settings (they carry the token) and the hook script's address book go. */
export interface RunSecrets {
  readonly root: string;
  readonly settingsFile: string;
  readonly hookFile: string;
}

/** What the sandbox of a run must fence. Paths exist (see src/sandbox/settings.ts). */
export interface RunSandbox {
  /** The agent's private git dir (a fix run); null for a read-only run, which has none. */
  readonly gitDir: string | null;
  readonly tmpDir: string;
  readonly mainGitDir: string;
  /** Reads are denied by default: the regions and credentials denied, the paths opened inside them. */
  readonly denyRead: readonly string[];
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

/** A read-only run has no worktree and no git of its own: its only writable place is its temp dir. */
function readOnlyFence(
  opts: Parameters<typeof readFence>[0],
  area: PrivateArea,
  fence: Pick<RunSandbox, 'tmpDir' | 'mainGitDir' | 'runtimeWritable' | 'allowedDomains'>,
): RunSandbox {
  const { mainGitDir } = fence;
  const leftovers = absentBefore(
    leftoverCandidates({ repoRoot: opts.repoRoot, mainGitDir, worktree: null, worktreeGitDir: null }),
  );
  area.onDispose(() => removeEmpty(leftovers));
  const reads = readFence(opts, area, { mainGitDir, tmpDir: area.tmpDir, fix: null });
  return { ...fence, ...reads, gitDir: null, mainTree: null };
}

/** Where the run's secrets go in its private area (the agent cannot read them). */
const secretFiles = (area: PrivateArea): RunSecrets => ({
  root: area.secretsRoot,
  settingsFile: path.join(area.secretsDir, 'settings.json'),
  hookFile: path.join(area.secretsDir, 'hook.json'),
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
}): Promise<RunPrivacy> {
  const area = createPrivateArea(privateBase(opts.env, process.getuid?.() ?? 0), opts.runName);
  const secrets = secretFiles(area);
  if (!opts.fenced || opts.config.mode === 'off') return { area, secrets, sandbox: null };
  try {
    // NOTE: the main git dir is asked of the repository, never of the worktree, whose `.git` file
    // an agent of an earlier turn could have pointed elsewhere; the worktree's own git is read
    // once, for its admin dir and the private git (createPrivateGit), at the same time.
    const [common, info] = await Promise.all([
      git(['rev-parse', '--git-common-dir'], { cwd: opts.repoRoot }),
      opts.worktree ? worktreeGit(opts.worktree) : null,
    ]);
    const mainGitDir = fs.realpathSync(path.resolve(opts.repoRoot, common.trim()));
    const runtimeWritable = runtimeFolders(opts.env);
    const fence = {
      tmpDir: area.tmpDir,
      mainGitDir,
      runtimeWritable,
      allowedDomains: opts.config.allowed_domains,
    };
    if (!opts.worktree || !info) return { area, secrets, sandbox: readOnlyFence(opts, area, fence) };
    const adminDir = info.gitDir;
    const leftovers = absentBefore(
      leftoverCandidates({
        repoRoot: opts.repoRoot,
        mainGitDir,
        worktree: opts.worktree,
        worktreeGitDir: adminDir,
      }),
    );
    area.onDispose(() => removeEmpty(leftovers));
    await createPrivateGit({
      worktree: opts.worktree,
      gitDir: area.gitDir,
      branch: `agentbox/${opts.runName}`,
      info,
    });
    const reads = readFence(opts, area, {
      mainGitDir,
      tmpDir: area.tmpDir,
      fix: { worktree: opts.worktree, adminDir, gitDir: area.gitDir },
    });
    const mainTree = fs.realpathSync(opts.repoRoot);
    return { area, secrets, sandbox: { ...fence, ...reads, gitDir: area.gitDir, mainTree } };
  } catch (error) {
    area.dispose();
    throw error;
  }
}
