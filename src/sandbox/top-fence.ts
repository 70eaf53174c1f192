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
 * agentbox's own installation (the package root: bin/, dist/, its node_modules), opened so that an
 * agentbox started inside a run can load and refuse the human gate itself (and log it).
 */
export function agentboxInstall(): string[] {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return [root, path.join(root, 'node_modules')];
}
