import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The top of the file system: a run reads the system (its programs, libraries and settings, and
 * the software installed there for every user) and nothing else of `/`. Every other top-level
 * folder is a denied region, as the home is: other repositories (`/srv/b`, `/work/x`, `/var/tmp/y`),
 * `/tmp` with other runs' and other Claude Code sessions' temp folders (`/tmp/claude-<uid>`), other
 * users' homes, mounts, `/run`'s sockets and keyrings. The run's own places are opened inside them
 * (src/sandbox/prepare.ts). Measured with Claude Code 2.1.330 (test/e2e/read-fence-facts.test.ts):
 * its temp files, shell snapshots and proxy sockets go to `CLAUDE_CODE_TMPDIR`, the run's own temp
 * dir, so nothing else of /tmp is needed.
 * NOTE: Linux only. macOS keeps /etc and /var under /private and its system in /System and
 * /Library; unmeasured there, so no top-level folder is denied on macOS (docs/security.md says so).
 */
export const SYSTEM_TOP: readonly string[] = [
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'etc',
  'opt',
  'nix',
  'snap',
];

/** What the sandbox mounts itself (a fresh /proc and /dev, /sys read-only): never listed. */
const KERNEL_TOP: readonly string[] = ['proc', 'dev', 'sys'];

/** The top-level folders (and files) of `/` a run may not read, from the names `/` holds. Pure. */
export function topRegions(children: readonly string[], platform: NodeJS.Platform): string[] {
  if (platform !== 'linux') return [];
  return children.filter((c) => !SYSTEM_TOP.includes(c) && !KERNEL_TOP.includes(c)).map((c) => `/${c}`);
}

/**
 * Whether `real` (symlinks resolved) lies in a system folder: a top-level link into /usr (`/data ->
 * /usr/share/data`) must not become a denial of the system. Pure.
 */
export function inSystem(real: string): boolean {
  const first = real.split('/')[1] ?? '';
  return SYSTEM_TOP.includes(first) || KERNEL_TOP.includes(first);
}

/**
 * The toolchain of the allowlist a PATH folder belongs to, whatever home it is in: `/root/.pyenv`
 * for `/root/.pyenv/shims` (a pyenv shim runs the versions beside it, which are not on PATH).
 * Only the table's dot-folders count (`.pyenv`, `.cargo/bin`, `.nvm`): a plain name such as
 * `sdk` could be any folder. null when none. Pure.
 */
export function toolchainOf(dir: string, rows: readonly string[]): string | null {
  const padded = `${dir}/`;
  for (const row of rows) {
    if (!row.startsWith('.')) continue;
    const at = padded.indexOf(`/${row}/`);
    if (at >= 0) return `${dir.slice(0, at)}/${row}`;
  }
  return null;
}

/**
 * agentbox's own installation (the package root: bin/, dist/, its node_modules, and the
 * node_modules folder holding it, where npm and pnpm put its dependencies beside it), opened so
 * that an agentbox started inside a run can load and refuse the human gate itself (and log it), and
 * so that `runs.setup`/`runs.verify` find the sandbox runtime's own helper (its `apply-seccomp`):
 * without the last, every fix run of an agentbox installed into a project failed its setup and
 * verify with exit code 127 (found by QA).
 */
export function agentboxInstall(root = fileURLToPath(new URL('../../', import.meta.url))): string[] {
  return [root, path.join(root, 'node_modules'), ...holdingPackages(root)];
}

/** The node_modules folder `root` (a package's folder, `@scope/name` too) lies in, if it does. Pure. */
export function holdingPackages(root: string): string[] {
  let up = path.dirname(path.resolve(root));
  if (path.basename(up).startsWith('@')) up = path.dirname(up);
  return path.basename(up) === 'node_modules' ? [up] : [];
}

/** Whether `child` is `parent` or inside it. */
function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * A denied folder around where claude starts, replaced by its contents but for the way down to it.
 * NOTE: Claude Code masks the dotfiles of its launch folder (`.gitconfig`, `.bashrc`, …) with
 * /dev/null, which needs a mount point there; a read-only run's folder (the repository, write-denied)
 * re-opened inside a denied region is a read-only mount, and bubblewrap then failed every command
 * ("Can't create file at <repo>/.gitconfig: Read-only file system", measured with 2.1.330 in
 * test/e2e/read-fence-top.test.ts). So for a read-only run the regions around the repository are
 * listed entry by entry, which leaves the repository's own path as the host's. Each entry is taken
 * by its real path when it stays in the region, and left out when it leads elsewhere (a link to
 * /usr must not deny the system). An entry made after the run starts is not denied. `list` gives a
 * folder's entries and `real` an entry's real path (null: gone). Pure given those two.
 */
export function carveTo(
  denyRead: readonly string[],
  target: string,
  list: (dir: string) => readonly string[],
  real: (p: string) => string | null,
): string[] {
  const out = new Set<string>();
  for (const region of denyRead) {
    if (region === target || !within(target, region)) {
      out.add(region);
      continue;
    }
    for (let dir = region; dir !== target; ) {
      const next = path.join(dir, path.relative(dir, target).split(path.sep)[0]!);
      for (const name of list(dir)) {
        const entry = real(path.join(dir, name));
        if (entry && within(entry, region) && !within(target, entry)) out.add(entry);
      }
      dir = next;
    }
  }
  return [...out];
}

/**
 * A glob that matches `p` alone (`/tmp/[a]bc` for `/tmp/abc`): Claude Code expands a glob in
 * `denyRead` when each command starts, and one that matches nothing mounts nothing, where a plain
 * path that vanished made bubblewrap fail the command ("Can't mkdir …: Read-only file system",
 * measured with 2.1.330). A name with a glob character of its own stays a plain path. Pure.
 */
export function selfGlob(p: string): string {
  const name = path.basename(p);
  if (/[*?[\]{}\\!]/.test(name) || name === '') return p;
  return path.join(path.dirname(p), `[${name[0]}]${name.slice(1)}`);
}
