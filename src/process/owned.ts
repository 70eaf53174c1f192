import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import { killMarked, MARK_VAR } from './reap.js';

export interface OwnedExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError?: string;
}

export interface OwnedChild {
  readonly pid: number | undefined;
  readonly mark: string;
  readonly exited: Promise<OwnedExit>;
  /** Its standard input, with `stdin: 'pipe'` and no `input`: the caller writes it and ends it. */
  readonly stdin: Writable | null;
  /**
   * Ends the process and everything it started: SIGTERM to its process group, SIGKILL after
   * `graceMs`, then SIGKILL to any marked process that escaped the group. Safe to call twice.
   */
  stop(graceMs?: number): Promise<OwnedExit>;
}

export interface OwnedOptions {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
  readonly stdin?: 'ignore' | 'pipe';
  /** Written to the child's standard input, which is then closed (a prompt too big for argv). */
  readonly input?: string;
}

/** Later sweeps for marked processes after the leader exited. */
const REAP_AGAIN_MS = [250, 1500];

/** How long the pipes may stay open after the leader exited (held by a descendant we cannot find). */
const PIPE_GRACE_MS = 2000;

const live = new Set<Pick<OwnedChild, 'pid' | 'mark'>>();
let exitHookInstalled = false;

/** Sends `signal` to a process group; a group that is gone is no error. */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

/**
 * If agentbox itself exits while children run (an uncaught error, process.exit), they die with
 * it instead of running on unsupervised.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      signalGroup(child.pid, 'SIGKILL');
      killMarked(child.mark);
    }
  });
}

/**
 * Registers a child started elsewhere (a pty) to die with agentbox, like the ones spawned here;
 * returns the release, called once it has ended.
 */
export function killOnParentExit(child: Pick<OwnedChild, 'pid' | 'mark'>): () => void {
  installExitHook();
  live.add(child);
  return () => live.delete(child);
}

/**
 * Spawns a child agentbox owns (argument array, never a shell) in a process group of its own,
 * marked through its environment so that descendants which leave the group are found too.
 */
export function spawnOwned(command: string, args: readonly string[], options: OwnedOptions): OwnedChild {
  installExitHook();
  const mark = randomBytes(8).toString('hex');
  const child = spawn(command, [...args], {
    cwd: options.cwd,
    env: { ...options.env, [MARK_VAR]: mark },
    stdio: [options.input !== undefined ? 'pipe' : (options.stdin ?? 'ignore'), 'pipe', 'pipe'],
    detached: true,
  });
  if (options.input !== undefined && child.stdin) {
    // A child that exits before reading it all closes the pipe: its exit says what happened.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  } else child.stdin?.on('error', () => {});
  if (options.onStdout) child.stdout?.on('data', options.onStdout);
  else child.stdout?.resume();
  if (options.onStderr) child.stderr?.on('data', options.onStderr);
  else child.stderr?.resume();

  const exited = new Promise<OwnedExit>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, spawnError: error.message }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  reapOnExit(child, mark);
  let stopping: Promise<OwnedExit> | undefined;
  const owned: OwnedChild = {
    pid: child.pid,
    mark,
    exited,
    stdin: options.input === undefined ? child.stdin : null,
    stop(graceMs = 3000) {
      stopping ??= stopGroup(child.pid, exited, graceMs);
      return stopping;
    },
  };
  live.add(owned);
  void exited.then(() => {
    killMarked(mark);
    live.delete(owned);
  });
  return owned;
}

/**
 * When the leader is gone, whatever it left running in its group or elsewhere goes too.
 * NOTE: on 'exit', not on 'close': a descendant that inherited stdout (`(setsid sleep 300 &)`)
 * keeps the pipes, and so 'close', open for as long as it lives; waiting for 'close' to kill it
 * waited forever. Killing it closes the pipes; one that cannot be found (its environment
 * cleared) only delays 'close' until its pipes are let go.
 */
function reapOnExit(child: ChildProcess, mark: string): void {
  child.once('exit', () => {
    signalGroup(child.pid, 'SIGKILL');
    killMarked(mark);
    // NOTE: a process the leader was starting as it died can be missed by the first sweep: its
    // environment is not readable yet, and a sandbox's bwrap may not have armed its
    // die-with-parent signal (seen in the fault suite: a bwrap left after claude was killed).
    // Two more sweeps catch it; they never keep agentbox alive.
    for (const ms of REAP_AGAIN_MS) setTimeout(() => killMarked(mark), ms).unref();
    const release = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_GRACE_MS);
    release.unref();
    child.once('close', () => clearTimeout(release));
  });
}

/**
 * How `child` ended, if it does within `ms`; null when it is still running then (it is left running:
 * the caller decides, e.g. `child.stop()`).
 */
export async function exitWithin(child: Pick<OwnedChild, 'exited'>, ms: number): Promise<OwnedExit | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([child.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves with how the leader ended. */
async function stopGroup(
  pid: number | undefined,
  exited: Promise<OwnedExit>,
  graceMs: number,
): Promise<OwnedExit> {
  signalGroup(pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      signalGroup(pid, 'SIGKILL');
      resolve();
    }, graceMs);
  });
  const result = await Promise.race([exited, killed.then(() => exited)]);
  clearTimeout(timer);
  return result;
}
