import type ChildProcess from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseDuration } from '../config/duration.js';
import { isCi } from '../util/ci.js';
import { VERSION } from '../version.js';
import { privateDirProblem, socketPath } from './place.js';

/*
 * The resident agentbox started by itself (docs/resident.md), as Nx and Gradle start their daemons:
 * a scout, plan, review, fix or revise that a person runs in a terminal and that found no resident
 * agentbox runs itself, as always, and on its way out starts one in the background, so that the
 * person's next command is served warm. It stops after `AGENTBOX_RESIDENT_IDLE` (15 minutes) with
 * nothing to do. Never in CI, never in a script (no terminal), never from inside a run;
 * `AGENTBOX_RESIDENT=manual` uses one you start and never starts one, `0` neither.
 */

/** How long a resident agentbox started by itself waits for work before it stops. */
export const DEFAULT_IDLE = '15m';
/** The longest idle wait a timer takes (2^31 − 1 ms, about 24.8 days), rounded down to days. */
export const MAX_IDLE_MS = 24 * 86_400_000;
/** A log past this size is started afresh (the old one kept as `.old`). */
const MAX_LOG_BYTES = 1024 * 1024;
/**
 * What a background server keeps of its starter's environment: where things are, not secrets, nor
 * NODE_OPTIONS (an `--inspect` set for one command would leave a debugger port open for as long as
 * the server runs; a relative `--require` fails in the server's folder).
 */
const KEPT = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  'AGENTBOX_CODE_CACHE',
  // (what tells every process of one tree of agentbox commands: src/process/reap.ts)
  'AGENTBOX_LINEAGE',
] as const;

type Env = Readonly<Record<string, string | undefined>>;

/** The terminals of the command's stdin and stderr (where the person is, and where the notice goes). */
export interface Terminal {
  readonly in: boolean;
  readonly err: boolean;
}

/**
 * `AGENTBOX_RESIDENT`: `auto` (unset or empty) uses a resident agentbox and starts one from a
 * person's terminal; `always` (`1`, `on`, `true`, `yes`) starts one from anywhere; `off` (`0`,
 * `false`, `no`) neither uses nor starts one; `manual`, and any other value, uses one and never
 * starts one. Pure.
 */
export function residentSetting(env: Env): 'auto' | 'always' | 'manual' | 'off' {
  const value = env.AGENTBOX_RESIDENT?.trim().toLowerCase() ?? '';
  if (value === '') return 'auto';
  if (['1', 'on', 'true', 'yes'].includes(value)) return 'always';
  if (['0', 'off', 'false', 'no'].includes(value)) return 'off';
  return 'manual';
}

/**
 * Whether a command that found no resident agentbox starts one as it exits: `AGENTBOX_RESIDENT=1`
 * always; unset, in a person's terminal outside CI; never from inside a run or Claude Code. Pure.
 */
export function startsResident(env: Env, terminal: Terminal): boolean {
  if (env.AGENTBOX_RUN || env.AGENTBOX_PROCESS_MARK || env.CLAUDECODE) return false;
  const setting = residentSetting(env);
  if (setting === 'always') return true;
  return setting === 'auto' && terminal.in && terminal.err && !isCi(env);
}

/** How long a server started by itself may stay idle: `AGENTBOX_RESIDENT_IDLE`, else 15m. Pure. */
export function idleSetting(env: Env): string {
  const value = env.AGENTBOX_RESIDENT_IDLE?.trim();
  const ms = value ? parseDuration(value) : undefined;
  return value && ms && ms <= MAX_IDLE_MS ? value : DEFAULT_IDLE;
}

/** The background server's environment: `env`'s places and locale, none of its keys or tokens. Pure. */
export function serverEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * The line the person reads once a server started: what it is, how long it stays (and why not as
 * long as `env` asked, when its AGENTBOX_RESIDENT_IDLE is no duration a timer takes), how to stop it.
 */
export function startedNotice(pid: number, idle: string, env: Env = {}): string {
  // (printable ASCII only: the value is the environment's, and goes to a terminal)
  const asked = env.AGENTBOX_RESIDENT_IDLE?.trim().replace(/[^\x20-\x7e]/g, '?');
  const why =
    asked && asked !== idle
      ? ` (AGENTBOX_RESIDENT_IDLE ${JSON.stringify(asked)} is no duration of at most 24d, such as "1h")`
      : '';
  return (
    `agentbox: started a resident agentbox (pid ${pid}) so that your next scout, plan, review, fix and revise start faster; it stops after ${idle} unused${why}\n` +
    '  → agentbox serve --stop stops it; AGENTBOX_RESIDENT=manual never starts one (docs/resident.md)\n'
  );
}

/**
 * Starts `agentbox serve --idle <idle>` of the package at `packageRoot` in the background (its own
 * session, its output appended to a log beside its socket); its pid, or null when there is no place
 * for it (an unbuilt agentbox, a state folder that is not the person's alone). A server of this
 * build that already runs (another command started it meanwhile) makes the new one exit at once.
 */
export function startInBackground(packageRoot: string, env: Env): { pid: number; idle: string } | null {
  const place = socketPath(env, packageRoot, VERSION);
  if (!place) return null;
  fs.mkdirSync(place.dir, { recursive: true, mode: 0o700 });
  if (privateDirProblem(place.dir) !== null) return null;
  const log = place.file.replace(/\.sock$/, '.log');
  const fd = openLog(log);
  const idle = idleSetting(env);
  try {
    // (required here: the client loads this module for every served command, and needs it rarely)
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof ChildProcess;
    const child = spawn(
      process.execPath,
      [path.join(packageRoot, 'bin', 'agentbox.cjs'), 'serve', '--idle', idle],
      {
        cwd: place.dir,
        env: { ...serverEnv(env), ...strayFdsVar(inheritableFds()) },
        detached: true,
        stdio: ['ignore', fd, fd],
      },
    );
    child.on('error', () => {});
    child.unref();
    if (child.pid === undefined) return null;
    markStarting(place.file, child.pid);
    return { pid: child.pid, idle };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A server started in the background listens some 100 ms after the command that started it has
 * said so: `<socket>.starting` holds its pid until it does, so that an `agentbox serve --stop` typed
 * right after the notice waits for it (src/resident/stop.ts) instead of finding no socket yet.
 */
export const startingMarker = (socketFile: string): string => socketFile.replace(/\.sock$/, '.starting');

function markStarting(socketFile: string, pid: number): void {
  try {
    const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = fs.constants;
    const fd = fs.openSync(startingMarker(socketFile), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, `${pid}\n`);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // (without it, a --stop typed at once may miss the server: it still stops by itself when idle)
  }
}

/** Removes the marker of `socketFile` when it names `pid` (the server, once it listens). */
export function clearStarting(socketFile: string, pid: number): void {
  const marker = startingMarker(socketFile);
  try {
    if (Number(fs.readFileSync(marker, 'utf8').trim()) === pid) fs.rmSync(marker, { force: true });
  } catch {
    // (none, or another's)
  }
}

/**
 * What tells the background server which descriptors it got from its starter's starter, to close
 * at once: a shell's `2>&1 | cat` pipe (or any descriptor the person's shell left open) held by a
 * server for its 15 minutes kept that pipeline from ending, and reached every run it served.
 */
export const STRAY_FDS_VAR = 'AGENTBOX_CLOSE_FDS';

const strayFdsVar = (fds: readonly number[]): Record<string, string> =>
  fds.length > 0 ? { [STRAY_FDS_VAR]: fds.join(',') } : {};

/** This process's descriptors past 2 that a program it starts inherits (not close-on-exec). */
export function inheritableFds(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  return names
    .map(Number)
    .filter((fd) => Number.isInteger(fd) && fd > 2)
    .filter((fd) => {
      try {
        const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
        return flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0;
      } catch {
        return false;
      }
    });
}

const O_CLOEXEC = 0o2000000;

/** Closes the descriptors `value` (STRAY_FDS_VAR) names: what the server's starter left it. */
export function closeStrayFds(value: string | undefined): void {
  for (const part of value?.split(',') ?? []) {
    const fd = Number(part);
    if (!/^\d+$/.test(part) || fd <= 2) continue;
    try {
      fs.closeSync(fd);
    } catch {
      // (closed already)
    }
  }
}

/** The server's log, opened to append (mode 600), started afresh past MAX_LOG_BYTES. */
function openLog(log: string): number {
  try {
    if (fs.lstatSync(log).size > MAX_LOG_BYTES) fs.renameSync(log, `${log}.old`);
  } catch {
    // (no log yet)
  }
  return fs.openSync(
    log,
    fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
    0o600,
  );
}
