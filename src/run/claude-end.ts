import type { EventLog } from '../ledger/events.js';
import { exitWithin, type OwnedChild, type OwnedExit } from '../process/owned.js';
import type { Halt } from './halt.js';

/**
 * How long claude may go on after its result line before it is stopped. Its own shutdown is ~40 ms;
 * the person's SessionEnd hooks run in it, and Claude Code cancels those after ~1.5 s (measured).
 */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface ClaudeEnd {
  /** How claude ended; null: the run ended at its result line, claude still shutting down. */
  readonly ended: Promise<OwnedExit | null>;
  /**
   * The run's release of claude: after an end at the result line, claude's exit is awaited (at
   * most `graceMs`, then it is stopped), and an exit that went wrong is logged; else it is stopped
   * (it has exited, or the run is being torn down).
   */
  finish(log: EventLog): Promise<unknown>;
}

/**
 * What a run's end waits for. A read-only run's ends at claude's result line: its answer, spend and
 * outcome are all there, and what claude does after it (its SessionEnd hooks, its sandbox's
 * teardown) is its own: the run's records are written meanwhile, and a served run answers its
 * client before claude has exited (docs/resident.md). Its processes are swept at its exit, as ever,
 * in the release. A fix run ends at claude's exit: its worktree is exported only once the processes
 * the agent left are gone, so nothing changes it after the export. A run being stopped (a halt) waits
 * for the exit too.
 */
export function claudeEnd(
  child: OwnedChild,
  atResult: Promise<void>,
  opts: { readonly readOnly: boolean; readonly halt: Halt; readonly graceMs?: number },
): ClaudeEnd {
  let early = false;
  const ended: Promise<OwnedExit | null> = opts.readOnly
    ? Promise.race([child.exited, atResult.then(() => null)]).then((first) => {
        if (first !== null || opts.halt.reason.kind !== 'finished') return first ?? child.exited;
        early = true;
        return null;
      })
    : child.exited;
  const graceMs = opts.graceMs ?? SHUTDOWN_GRACE_MS;
  return {
    ended,
    async finish(log) {
      if (!early) return child.stop();
      const exit = await exitWithin(child, graceMs);
      if (!exit) {
        log.append({
          event: 'claude_stopped_after_end',
          detail: `claude was still running ${Math.round(graceMs / 1000)} s after its result`,
        });
        return child.stop();
      }
      if (exit.code !== 0 || exit.signal)
        log.append({ event: 'claude_exit_after_end', code: exit.code, signal: exit.signal });
      return exit;
    },
  };
}
