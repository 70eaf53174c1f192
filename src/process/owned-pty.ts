import { randomBytes } from 'node:crypto';
import type { IDisposable, IPty } from '@lydell/node-pty';
import { killOnParentExit } from './owned.js';
import { killMarked, MARK_VAR } from './reap.js';

/**
 * Why a child behind a pty ended: by itself (`exit`, its code says how), from a signal agentbox did
 * not send (`signal`), after agentbox asked it to stop (`stopped`, SIGTERM), or killed because it
 * did not stop in time or was to end at once (`killed`, SIGKILL).
 */
export type EndReason = 'exit' | 'signal' | 'stopped' | 'killed';

export interface PtyExit {
  readonly at: number;
  readonly code: number | null;
  /** The signal's number as text (node-pty reports numbers), or null. */
  readonly signal: string | null;
  readonly why: EndReason;
}

export interface OwnedPty {
  readonly pid: number;
  readonly mark: string;
  readonly exited: Promise<PtyExit>;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /**
   * Ends the child and everything it started: SIGTERM to its process group, SIGKILL after
   * `graceMs` (at once for 0, with any marked process that left the group). Safe to call again:
   * a shorter grace brings the SIGKILL forward, a longer one changes nothing.
   */
  stop(graceMs?: number): Promise<PtyExit>;
}

export interface PtyOptions {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly cols: number;
  readonly rows: number;
}

/** node-pty's spawn, as the caller wires it (claude is started from src/claude/pty.ts). */
export type PtySpawner = (file: string, args: string[], options: PtyOptions) => IPty;

/** Later sweeps for marked processes after the leader exited (as src/process/owned.ts does). */
const REAP_AGAIN_MS = [250, 1500];
export const STOP_GRACE_MS = 3000;

/**
 * Starts `file` behind a pty that agentbox owns, under the same contract as `spawnOwned`: the pty
 * makes the child the leader of its own session and process group, which is signalled whole; a
 * mark in its environment finds descendants that left the group; it dies with agentbox. The
 * node-pty subscriptions are disposed when it has ended.
 */
export function spawnOwnedPty(
  openPty: PtySpawner,
  file: string,
  args: string[],
  options: PtyOptions & { readonly onData: (data: string) => void },
): OwnedPty {
  const mark = randomBytes(8).toString('hex');
  const { onData, ...rest } = options;
  const pty = openPty(file, args, { ...rest, env: { ...options.env, [MARK_VAR]: mark } });
  const release = killOnParentExit({ pid: pty.pid, mark });
  const signals = groupSignals(pty, mark);
  let ended = false;
  // NOTE: listeners first, before the caller awaits anything: a child that dies at once (a bad
  // binary, a flapping crash) would otherwise exit unheard.
  const subscriptions: IDisposable[] = [pty.onData(onData)];
  const exited = new Promise<PtyExit>((resolve) => {
    subscriptions.push(
      pty.onExit(({ exitCode, signal }) => {
        ended = true;
        signals.cancel();
        for (const s of subscriptions.splice(0)) s.dispose();
        reap(pty.pid, mark);
        release();
        resolve({
          at: Date.now(),
          code: signal ? null : exitCode,
          signal: signal ? String(signal) : null,
          why: endReason(signals.sent, signal),
        });
      }),
    );
  });
  return {
    pid: pty.pid,
    mark,
    exited,
    write: (data) => {
      if (!ended) pty.write(data);
    },
    resize: (cols, rows) => {
      if (!ended) pty.resize(cols, rows);
    },
    stop(graceMs = STOP_GRACE_MS) {
      if (!ended) signals.stop(graceMs);
      return exited;
    },
  };
}

/** Signals to a pty child's process group: SIGTERM once, SIGKILL at the earliest deadline asked for. */
function groupSignals(pty: IPty, mark: string) {
  let sent: 'SIGTERM' | 'SIGKILL' | null = null;
  let killAt = Number.POSITIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const send = (signal: 'SIGTERM' | 'SIGKILL'): void => {
    sent = signal;
    try {
      process.kill(-pty.pid, signal);
    } catch {
      // The group is gone; the leader alone may be left in the middle of exiting.
      pty.kill(signal);
    }
  };
  const kill = (): void => {
    clearTimeout(timer);
    killAt = Date.now();
    send('SIGKILL');
    killMarked(mark);
  };
  return {
    get sent() {
      return sent;
    },
    cancel: () => clearTimeout(timer),
    stop(graceMs: number): void {
      if (graceMs <= 0) {
        kill();
        return;
      }
      if (sent === null) send('SIGTERM');
      if (Date.now() + graceMs >= killAt) return;
      killAt = Date.now() + graceMs;
      clearTimeout(timer);
      // A child that ignores SIGTERM is killed after the grace period; the timer never keeps
      // agentbox alive (if agentbox exits first, its exit hook kills the child).
      timer = setTimeout(kill, graceMs).unref();
    },
  };
}

/** Why the child ended, from the last signal agentbox sent it and the one it died of. Pure. */
export function endReason(sent: 'SIGTERM' | 'SIGKILL' | null, diedOf: number | undefined): EndReason {
  if (sent === 'SIGKILL') return 'killed';
  if (sent === 'SIGTERM') return 'stopped';
  return diedOf ? 'signal' : 'exit';
}

/** The leader is gone: whatever it left running in its group or elsewhere goes too. */
function reap(pid: number, mark: string): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Nothing left in the group.
  }
  killMarked(mark);
  // NOTE: a process the leader was starting as it died can be missed by the first sweep (its
  // environment not readable yet); two more sweeps catch it.
  for (const ms of REAP_AGAIN_MS) setTimeout(() => killMarked(mark), ms).unref();
}
