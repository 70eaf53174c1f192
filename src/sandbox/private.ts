import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ownerEnv } from '../process/owner.js';
import { isAlive, processStartTime } from '../process/reap.js';
import { identity, writeScratchSync } from '../util/fs.js';

/**
 * What a run keeps from its agent: under `<tmp>/agentbox-<uid>/`, `secrets/<run>-<random>/` holds
 * the run's Claude Code settings (its hooks carry the endpoint's token) and the hook script's
 * address book; `work/<run>/` holds the agent's private git dir and temp dir. The whole `secrets/`
 * folder is denied to the sandbox and to the Read tool; both folders are 0700 and go at the end.
 * NOTE: the token is in no environment variable and on no command line: only in these files.
 */
export interface PrivateArea {
  readonly secretsRoot: string;
  readonly secretsDir: string;
  readonly workDir: string;
  readonly tmpDir: string;
  /**
   * A short folder of its own (`<base>/s/<8 hex>`, named after the run), the TMPDIR of claude and
   * of the sandbox runtime for `runs.setup`/`runs.verify`: both put their proxy's unix sockets in their TMPDIR, and a
   * socket's path must stay under ~108 bytes, which `tmpDir` (it holds the run's name) does not
   * (measured: `Failed to create bridge socket` for a long task).
   */
  readonly sockDir: string;
  readonly gitDir: string;
  writeSecret(name: string, content: string): string;
  /** Runs `cleanup` when the area is disposed (after its own folders are gone). */
  onDispose(cleanup: () => void): void;
  dispose(): void;
}

/**
 * `$TMPDIR/agentbox-<uid>`, or `/tmp/agentbox-<uid>` when TMPDIR holds a character a permission
 * rule cannot (the Read deny rule on the secrets must be valid, or Claude Code drops the whole
 * settings file).
 */
export function privateBase(env: { TMPDIR?: string | undefined }, uid: number): string {
  const tmp = env.TMPDIR && /^\/[A-Za-z0-9._/-]+$/.test(env.TMPDIR) ? env.TMPDIR : '/tmp';
  return path.join(tmp, `agentbox-${uid}`);
}

/** privateBase of the person this command runs for (their environment: src/process/owner.ts). */
export function ownPrivateBase(): string {
  return privateBase(ownerEnv(), process.getuid?.() ?? 0);
}

/**
 * A run's short socket folder (`s/<8 hex>`): named after the run, so that the one a crashed run
 * left is found again by its resume and by the watchdog, not left in the temp folder for good.
 */
function sockDirOf(base: string, runName: string): string {
  return path.join(base, 's', createHash('sha256').update(runName).digest('hex').slice(0, 8));
}

/**
 * What a run that ended without its own release (it crashed, it was killed) left of its private
 * area: its secrets folders (`secrets/<run>-<random>/`: its settings with the endpoint's token, the
 * model key its claude reads) and its socket folder, removed. Its work folder (the agent's private
 * git) stays for its resume. Nothing there is no error.
 */
export function removeCrashedArea(
  base: string,
  runName: string,
  /** Only what was there then (crashedArea): a resume may have made the run's next area since. */
  only?: CrashedArea,
): void {
  if (!isPlainName(runName)) return;
  const area = only ?? crashedArea(base, runName);
  const secretsRoot = path.join(base, 'secrets');
  for (const name of area.secrets) fs.rmSync(path.join(secretsRoot, name), { recursive: true, force: true });
  const sockets = sockDirOf(base, runName);
  if (area.sockets !== null && identity(sockets) === area.sockets)
    fs.rmSync(sockets, { recursive: true, force: true });
}

/** A crashed run's private area as it is now: its secrets folders' names, its socket folder's identity. */
export interface CrashedArea {
  readonly secrets: readonly string[];
  readonly sockets: string | null;
}

export function crashedArea(base: string, runName: string): CrashedArea {
  if (!isPlainName(runName)) return { secrets: [], sockets: null };
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(base, 'secrets'));
  } catch {
    // No secrets folder: nothing of the run's there.
  }
  // Exactly the run's own (`<run>-<12 hex>`): not another area's whose name begins with the run's
  // (`<run>-verify`, merge's check of its patch).
  const secrets = names.filter(
    (name) => name.startsWith(`${runName}-`) && /^[0-9a-f]{12}$/.test(name.slice(runName.length + 1)),
  );
  return { secrets, sockets: identity(sockDirOf(base, runName)) };
}

/**
 * All a run's private area, its work folder too (the agent's private git, its temp files): the run
 * is discarded or collected by gc and will not be resumed. Its own release removes it when it ends;
 * this is for a run that crashed and was never taken up. `base`: this person's (privateBase).
 */
export function removeRunArea(base: string, runName: string): void {
  // A name from a fetched ledger is a stranger's: only one plain path component is looked for.
  if (!isPlainName(runName)) return;
  removeCrashedArea(base, runName);
  fs.rmSync(path.join(base, 'work', runName), { recursive: true, force: true });
}

/** The file in a secrets folder that names the process holding it: its pid and start time. */
const OWNER_FILE = 'owner';

/**
 * Every secrets folder (and socket folder) whose process is gone, removed: what a process killed
 * outright left — a resident agentbox's standby (src/run/standby/) whose run waits in REVIEW, which
 * no crash path finds. A folder naming no owner (older, or being made) is left. Returns the names.
 */
export function sweepOrphanedSecrets(base: string): string[] {
  const root = path.join(base, 'secrets');
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const kept = new Set<string>();
  for (const name of names) {
    const run = /^(.+)-[0-9a-f]{12}$/.exec(name)?.[1];
    if (!run || !isPlainName(run)) continue;
    let owner: string;
    try {
      owner = fs.readFileSync(path.join(root, name, OWNER_FILE), 'utf8');
    } catch {
      kept.add(run);
      continue;
    }
    const [pid, start] = owner.trim().split(' ');
    if (isAlive(Number(pid), start === undefined || start === 'null' ? null : start)) {
      kept.add(run);
      continue;
    }
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  for (const name of removed) {
    const run = name.replace(/-[0-9a-f]{12}$/, '');
    if (!kept.has(run)) fs.rmSync(sockDirOf(base, run), { recursive: true, force: true });
  }
  return removed;
}

/** One path component of a run's name's characters: never `..`, never a separator. */
function isPlainName(name: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(name) && name !== '.' && name !== '..';
}

function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // NOTE: a folder that existed already (made by someone else in a shared /tmp) must be ours and
  // closed: otherwise another user could read the secrets.
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid())) {
    throw new Error(`${dir} is not a folder of this user; remove it and try again`);
  }
  fs.chmodSync(dir, 0o700);
}

export function createPrivateArea(base: string, runName: string): PrivateArea {
  mkdirPrivate(base);
  const secretsRoot = path.join(base, 'secrets');
  mkdirPrivate(secretsRoot);
  // A run that crashed left its secrets and sockets behind (their endpoint is gone): they go now.
  removeCrashedArea(base, runName);
  const secretsDir = path.join(secretsRoot, `${runName}-${randomBytes(6).toString('hex')}`);
  mkdirPrivate(secretsDir);
  // Whose it is: once that process is gone, it is nobody's (sweepOrphanedSecrets).
  writeScratchSync(
    path.join(secretsDir, OWNER_FILE),
    `${process.pid} ${processStartTime(process.pid)}\n`,
    0o600,
  );
  // The work folder survives a crash, so a resumed run keeps its agent's commits.
  const workDir = path.join(base, 'work', runName);
  mkdirPrivate(path.join(base, 'work'));
  mkdirPrivate(workDir);
  const tmpDir = path.join(workDir, 'tmp');
  fs.mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
  mkdirPrivate(path.join(base, 's'));
  const sockDir = sockDirOf(base, runName);
  mkdirPrivate(sockDir);
  let disposed = false;
  const more: (() => void)[] = [];
  return {
    secretsRoot,
    secretsDir,
    workDir,
    tmpDir,
    sockDir,
    gitDir: path.join(workDir, 'git'),
    writeSecret(name, content) {
      const file = path.join(secretsDir, name);
      // Scratch: the folder is the run's for this process only (a new one after a crash).
      writeScratchSync(file, content, 0o600);
      return file;
    },
    onDispose(cleanup) {
      more.push(cleanup);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      fs.rmSync(secretsDir, { recursive: true, force: true });
      fs.rmSync(workDir, { recursive: true, force: true });
      fs.rmSync(sockDir, { recursive: true, force: true });
      for (const cleanup of more) cleanup();
    },
  };
}
