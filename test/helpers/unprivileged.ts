import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './bin.js';

/** The user a check that root would pass runs as when the tests run as root: nobody. */
export const NOBODY = 65534;

/**
 * Runs `script` (an ES module body; `src/` is imported as `@src/…`) in a node of its own with
 * the repository's TypeScript loader, as a user without root's powers: nobody (65534, no
 * supplementary groups) when the tests run as root, else the tests' own user. For the checks a
 * root process passes whatever a file's mode says (it reads an unreadable file). What the script
 * prints is returned, and its stderr when it fails.
 */
export function runUnprivileged(script: string): string {
  const body = script.replaceAll('@src/', `${REPO_ROOT}/src/`);
  const ids = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    ...ids,
  });
  if (result.status !== 0) throw new Error(`exit ${result.status}: ${result.stderr}`);
  return result.stdout;
}
