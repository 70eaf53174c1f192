import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'rolldown';
import { REPO_ROOT } from './bin.js';

/** The user a check that root would pass runs as when the tests run as root: nobody. */
export const NOBODY = 65534;

/**
 * Runs `script` (an ES module body; `src/` is imported as `@src/…`) in a node of its own, as a user
 * without root's powers: nobody (65534, no supplementary groups) when the tests run as root, else
 * the tests' own user. For the checks a root process passes whatever a file's mode says (it reads
 * an unreadable file). The script is bundled first (rolldown, as the build does) into one file in a
 * folder anyone may read, so that it runs wherever the repository was cloned: a clone in a folder
 * of root's alone (`mktemp -d`, `/root`) cannot be read by nobody. What the script prints is
 * returned, and its stderr when it fails.
 */
export async function runUnprivileged(script: string): Promise<string> {
  const body = script.replaceAll('@src/', `${REPO_ROOT}/src/`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-unprivileged-'));
  try {
    fs.chmodSync(dir, 0o755);
    const entry = path.join(dir, 'entry.ts');
    fs.writeFileSync(entry, body);
    await build({
      input: entry,
      platform: 'node',
      logLevel: 'silent',
      output: { file: path.join(dir, 'script.mjs'), format: 'esm', codeSplitting: false },
    });
    fs.chmodSync(path.join(dir, 'script.mjs'), 0o644);
    const ids = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
    const node = ids.uid === undefined ? process.execPath : nodeForOthers();
    const run = () => spawnSync(node, [path.join(dir, 'script.mjs')], { cwd: dir, encoding: 'utf8', ...ids });
    const result = run();
    if (result.error)
      throw new Error(`could not start node as uid ${ids.uid ?? 'self'}: ${result.error.message}`);
    if (result.status !== 0)
      throw new Error(`exit ${result.status} (${result.signal ?? 'no signal'}): ${result.stderr}`);
    return result.stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether a user who is neither the owner nor in the group can run `file` (every folder above it passable). */
function othersCanRun(file: string): boolean {
  if ((fs.statSync(file).mode & 0o001) === 0) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/**
 * This node, where nobody may run it: itself, or a copy in a folder anyone may enter (CI's node 24
 * lives inside the clone, which `mktemp -d` makes root's alone: nobody's spawn failed, EACCES).
 * The copy is one per node binary (its size and time), kept and shared by every test process and
 * every run: a copy per process, removed at its exit, was left behind (127 MB each) when vitest
 * ended its workers, once per `.ci/run`.
 */
function nodeForOthers(): string {
  if (othersCanRun(process.execPath)) return process.execPath;
  const stat = fs.statSync(process.execPath);
  const id = createHash('sha256').update(`${stat.size} ${stat.mtimeMs}`).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), `agentbox-node-${id}`);
  const copy = path.join(dir, 'node');
  if (fs.statSync(copy, { throwIfNoEntry: false })?.size === stat.size && othersCanRun(copy)) return copy;
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755);
  // Copied beside it, then renamed: a test process starting it meanwhile never finds half a file.
  const part = `${copy}.${process.pid}`;
  fs.copyFileSync(process.execPath, part);
  fs.chmodSync(part, 0o755);
  fs.renameSync(part, copy);
  return copy;
}

/** A plain file of another user's (root's) that no one else may write, for a user other than root. */
export function othersFile(): string {
  const me = process.getuid?.();
  const found = ['/etc/passwd', '/etc/group', process.execPath].find((f) => {
    const stat = fs.statSync(f, { throwIfNoEntry: false });
    return stat?.isFile() && stat.uid !== me && (stat.mode & 0o022) === 0;
  });
  if (!found) throw new Error('no file of another user found: /etc/passwd, /etc/group and node are yours');
  return found;
}

/**
 * For a user other than root, who can neither give a file away nor write one of another user's:
 * runs `script` (as runUnprivileged) in a user and mount namespace of its own (`unshare --user
 * --map-root-user --mount`), where the file at `at` is replaced by a bind mount of othersFile():
 * a plain file of root's, which belongs there to an unmapped user (65534), the process being 0.
 */
export function runWithOthersFileAt(at: string, script: string): string {
  const body = script.replaceAll('@src/', `${REPO_ROOT}/src/`);
  const shell = 'mount --bind "$1" "$2" && exec "$3" --import tsx --input-type=module -e "$4"';
  const args = ['--user', '--map-root-user', '--mount', 'sh', '-c', shell, 'sh', othersFile(), at];
  const result = spawnSync('unshare', [...args, process.execPath, body], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error(
      `this check needs root, or unprivileged user namespaces (unshare --user --map-root-user --mount): ${result.error?.message ?? result.stderr}`,
    );
  return result.stdout;
}
