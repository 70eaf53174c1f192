import type { Ledger, RunState, StateEvent, StatePatch } from '../ledger/index.js';
import { HEARTBEAT_MS, heartbeat, updateState } from '../ledger/index.js';
import type { SessionLog } from './log.js';

/** The run whose state.json the session writes, and the log a failed write goes to. */
export interface StateTarget {
  readonly ledger: Ledger;
  readonly runName: string;
  readonly log: SessionLog;
}

/**
 * Writes the run's state on the session's behalf. The session outlives a failed write (its run
 * folder removed under it, a full disk), but the failure leaves a trace: a `state_write_failed`
 * line in the session log naming what was written. Never throws.
 */
export async function writeState(
  target: StateTarget,
  what: string,
  patch: StatePatch | ((current: RunState) => StatePatch | null),
  event?: StateEvent,
): Promise<void> {
  try {
    await updateState(target.ledger, target.runName, patch, event);
  } catch (error) {
    target.log.write('state_write_failed', {
      what,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/** The watchdog reads a silent supervisor as stalled: a beat while the session lives, idle or not. Returns the stop. */
export function startHeartbeat(target: StateTarget): () => void {
  const timer = setInterval(() => void writeState(target, 'heartbeat', heartbeat(new Date())), HEARTBEAT_MS);
  return () => clearInterval(timer);
}
