import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../airlock/paths.js';
import { userConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { agentboxStateDir } from '../util/state-dir.js';
import type { SandboxEnv } from './available.js';
import { assertFewIgnored, hiddenIgnored, ignoredEntries } from './ignored.js';
import type { PrivateArea } from './private.js';
import { HOME_SECRETS, homePath, homeRegions, READ_ALLOWLIST, type ReadFence } from './read-allowlist.js';
import { agentboxInstall, carveTo, inSystem, toolchainOf, topRegions } from './top-fence.js';

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
export interface RunPlaces {
  readonly mainGitDir: string;
  readonly tmpDir: string;
  /** The short TMPDIR of claude and the sandbox runtime (their sockets): PrivateArea.sockDir. */
  readonly sockDir: string;
  /** The run's own global git config (src/sandbox/run-gitconfig.ts). */
  readonly gitConfig: string;
  /** The agent's private git dir (src/git/private.ts): a fix run's writable, a read-only run's not. */
  readonly gitDir: string;
  /** A fix run's worktree and its own admin folder in the main git dir. */
  readonly fix: { readonly worktree: string; readonly adminDir: string } | null;
}

/** What the person opened with `sandbox.allow_read`, real paths (relative ones in the repository). */
function openedByPerson(opts: {
  readonly env: SandboxEnv;
  readonly repoRoot: string;
  readonly config: Config['sandbox'];
}) {
  return existing(opts.config.allow_read.map((p) => expand(p, opts.env.HOME, opts.repoRoot)));
}

/**
 * Refuses a read-only run whose repository has more ignored entries to hide than its fence lists
 * (src/sandbox/ignored.ts), before the run exists.
 */
export async function assertReadOnlyFence(opts: ReadOnlyPlace): Promise<void> {
  assertFewIgnored(await hiddenByPerson(opts), fs.realpathSync(opts.repoRoot), userConfigPath(opts.env));
}

type ReadOnlyPlace = {
  readonly env: SandboxEnv;
  readonly repoRoot: string;
  readonly config: Config['sandbox'];
};

/** What a read-only run of the repository hides of what git ignores, once the person's openings are taken out. */
export async function hiddenByPerson(opts: ReadOnlyPlace): Promise<string[]> {
  return hiddenIgnored(await ignoredEntries(opts.repoRoot), openedByPerson(opts));
}

/**
 * The run's read fence (src/sandbox/read-allowlist.ts): reads are denied by default. Denied: the
 * person's home and its XDG folders and Claude Code's config dir, and on Linux every top-level
 * folder but the system's (src/sandbox/top-fence.ts: /tmp, /srv, /home, …) (regions), every run's
 * private area, the folder holding this repository's run worktrees, the other worktrees' admin
 * folders, and, even inside what is opened, the credentials (HOME_SECRETS), `sandbox.deny_read`,
 * every run's secrets and agentbox's state. Opened again: the table's toolchains and caches, the
 * PATH folders in a region (and the table's toolchain a PATH folder is part of), agentbox's own
 * installation, the person's `sandbox.allow_read`, the run's git config, and what the run works
 * on (the repository and the run's private git, and a fix run's worktree and its admin folder).
 */
export function readFence(
  opts: {
    readonly env: SandboxEnv;
    readonly repoRoot: string;
    readonly config: Config['sandbox'];
    /** A read-only run's: the repository's ignored entries (src/sandbox/ignored.ts), real paths. */
    readonly ignored?: readonly string[];
  },
  area: PrivateArea,
  places: RunPlaces,
): ReadFence & { readonly listed: readonly string[] } {
  const { env } = opts;
  const { fix } = places;
  const opened = openedByPerson(opts);
  const ignored = fix ? [] : hiddenIgnored(opts.ignored ?? [], opened);
  // (checked before the run was made, assertReadOnlyFence; again here, for the repository as it is now)
  assertFewIgnored(ignored, fs.realpathSync(opts.repoRoot), userConfigPath(env));
  const top = existing(topRegions(fs.readdirSync('/'), process.platform)).filter((p) => !inSystem(p));
  const regions = [...homeRegions(env), ...top];
  const secrets = HOME_SECRETS.map((p) => homePath(p, env));
  const denyRead = existing([
    ...regions,
    path.dirname(area.secretsRoot),
    // A fix run works on its worktree, not on the main tree: the main tree's untracked and ignored
    // files (a .env, a local config) are the person's, not the commit's. Its git dir stays open.
    ...(fix ? [opts.repoRoot, path.dirname(fix.worktree), path.join(places.mainGitDir, 'worktrees')] : []),
    ...secrets,
    // The repository's config and its submodules' (a token in a remote URL, actions/checkout's
    // extraheader): the run's git reads its own (src/git/agent-config.ts), a scout's git none.
    ...gitConfigs(places.mainGitDir),
    ...opts.config.deny_read.map((p) => expand(p, env.HOME, opts.repoRoot)),
    area.secretsRoot,
    agentboxStateDir(env),
  ]);
  const root = fs.realpathSync(opts.repoRoot);
  // A read-only run starts claude in the repository: no denied folder may lie around it (carveTo).
  const denied = fix
    ? denyRead
    : [...new Set([...carveTo(denyRead, root, carveList(env), realOrNull), ...ignored])];
  const install = installOpened(root);
  const allowRead = existing([
    ...READ_ALLOWLIST.map((row) => homePath(row.path, env)),
    ...pathFolders(env.PATH, regions, secrets),
    ...install,
    ...opened,
    // A read-only run works on the repository itself; a fix run only on its git (its objects).
    // runs.setup, which copies ignored folders from the main tree ($AGENTBOX_REPO_ROOT/node_modules),
    // is opened the main tree by its own fence (setupSandbox); the ledger stays denied.
    ...(fix ? [] : [opts.repoRoot]),
    places.mainGitDir,
    places.gitDir,
    ...(fix ? [fix.worktree, fix.adminDir] : []),
    places.tmpDir,
    places.sockDir,
    places.gitConfig,
  ]);
  // (listed: any may be gone when a command runs, src/sandbox/top-fence.ts selfGlob)
  return { denyRead: denied, allowRead, listed: denied.filter((d) => !denyRead.includes(d)) };
}

/**
 * agentbox's installation (src/sandbox/top-fence.ts), unless it is the repository `root` or holds
 * it, or lies in the repository outside its packages (a checkout of agentbox itself): that would
 * open a fix run's main tree.
 */
function installOpened(root: string): string[] {
  return agentboxInstall().filter(
    (p) =>
      !isInside(root, p) &&
      (!isInside(p, root) || path.relative(root, p).split(path.sep).includes('node_modules')),
  );
}

/**
 * `config` of the git dir and of every submodule's git dir below its `modules/` (a submodule's name
 * may hold slashes: its git dir is the folder with a HEAD), at most 6 folders deep.
 */
export function gitConfigs(gitDir: string): string[] {
  const found = [path.join(gitDir, 'config')];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.name === 'HEAD' && e.isFile())) {
      found.push(path.join(dir, 'config'));
      if (entries.some((e) => e.name === 'modules')) walk(path.join(dir, 'modules'), 0);
      return;
    }
    if (depth < 6) for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name), depth + 1);
  };
  walk(path.join(gitDir, 'modules'), 0);
  return found;
}

/**
 * A folder's entries for carveTo. A temp folder's entries come and go by the second (other
 * processes' sockets and temp folders: measured, one gone between the listing and a command made
 * bubblewrap fail it), so around a read-only run's repository a temp folder stays open but for
 * Claude Code's folder of other sessions (`claude-<uid>`: their task outputs).
 */
function carveList(env: SandboxEnv): (dir: string) => string[] {
  const temps = new Set(existing(['/tmp', '/var/tmp', env.TMPDIR ?? '/tmp']));
  const claude = `claude-${process.getuid?.() ?? 0}`;
  return (dir) => {
    try {
      const names = fs.readdirSync(dir);
      return temps.has(dir) ? names.filter((n) => n === claude) : names;
    } catch {
      return [];
    }
  };
}

const realOrNull = (p: string): string | null => {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
};

/**
 * PATH's folders inside a denied region (~/.local/bin, ~/.cargo/bin, /opt-like folders elsewhere):
 * the commands the run is expected to use; and for one inside a toolchain of the table in another
 * home (/root/.pyenv/shims), that toolchain (a shim runs the versions beside it). Never a region
 * itself, never in a credential.
 */
function pathFolders(
  PATH: string | undefined,
  regions: readonly string[],
  secrets: readonly string[],
): string[] {
  const rows = READ_ALLOWLIST.map((row) => row.path);
  return (PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir) && !regions.includes(dir))
    .filter((dir) => regions.some((r) => isInside(dir, r)) && !secrets.some((s) => isInside(dir, s)))
    .flatMap((dir) => [dir, toolchainOf(dir, rows) ?? dir])
    .filter((dir) => !regions.includes(dir));
}
