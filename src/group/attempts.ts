import { errnoCode } from '../errors.js';
import { isRunName, runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { type RunDetails, readRun } from '../ledger/read.js';
import type { RunMeta, RunStatus } from '../ledger/types.js';
import type { GroupDetails } from './store.js';

/** One attempt of a group with its run as it is now. */
export interface Attempt {
  readonly attempt: number;
  readonly model: string | null;
  /** The run's folder name; null: it has not started (it waits its turn, or never will). */
  readonly name: string | null;
  /**
   * null: not started, its folder is gone (`agentbox gc` removed it), or the run there is not this
   * group's attempt k (`foreign`).
   */
  readonly run: RunDetails | null;
  /** The member names a run that is not this group's attempt k (a hand-edited or hostile state.json). */
  readonly foreign?: boolean;
}

/** Every attempt of a group, in order, each with its run read from the ledger. */
export function groupAttempts(ledger: Ledger, group: GroupDetails): Attempt[] {
  return group.state.members.map((m) => {
    const run = m.run && isRunName(m.run) ? readIfThere(ledger, m.run) : null;
    const own = run !== null && isOwnAttempt(group.name, m.attempt, run.meta);
    return {
      attempt: m.attempt,
      model: m.model,
      name: m.run,
      run: own ? run : null,
      ...(run !== null && !own ? { foreign: true } : {}),
    };
  });
}

/**
 * Whether a run is attempt k of the group in folder `groupName`, by the run's own meta.yaml (which
 * the group's state.json cannot change): a group's state is untrusted, and one naming a person's
 * own run must never have it ranked, merged or discarded. The id is the folder's, not group.json's.
 */
export function isOwnAttempt(groupName: string, k: number, meta: Pick<RunMeta, 'options'>): boolean {
  const of = meta.options?.group as { id?: unknown; attempt?: unknown } | undefined;
  return of?.id === runIdOf(groupName) && of?.attempt === k;
}

function readIfThere(ledger: Ledger, name: string): RunDetails | null {
  try {
    return readRun(ledger, name);
  } catch (error) {
    if ((error as { code?: string }).code === 'RUN_NOT_FOUND' || errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The one status a group shows as (`agentbox status`, the web UI), in the runs' own words. Pure:
 * `alive` says whether the group's process still runs.
 *  - MERGED / DISCARDED: the gate decided.
 *  - ACTIVE: an attempt runs, or attempts wait and the group's process lives to start them.
 *  - REVIEW: an attempt has changes to merge; DONE: one finished with nothing to merge.
 *  - CRASHED: the group's process went with attempts left to start (`agentbox recover` starts them),
 *    whether the watchdog has marked the group yet (state.crashed) or not; or it went (marked) with
 *    an attempt that crashed with it.
 *  - else every attempt failed: their shared status, or ABORTED when they differ.
 */
export function groupStatus(group: GroupDetails, attempts: readonly Attempt[], alive: boolean): RunStatus {
  const { status } = group.state;
  if (status === 'MERGED' || status === 'DISCARDED') return status;
  const states = attempts.map((a) => a.run?.state?.status ?? null);
  if (states.includes('ACTIVE') || states.includes('STALLED'))
    return states.includes('ACTIVE') ? 'ACTIVE' : 'STALLED';
  const waiting = attempts.some((a) => a.name === null) && group.state.halted === null;
  if ((status === 'ACTIVE' || group.state.crashed) && waiting) return alive ? 'ACTIVE' : 'CRASHED';
  if (states.includes('REVIEW')) return 'REVIEW';
  if (states.includes('DONE')) return 'DONE';
  const ended = states.filter((s): s is RunStatus => s !== null);
  if (ended.length === 0) return alive ? 'ACTIVE' : 'CRASHED';
  // The group's process died with an attempt (kill -9): recover takes that attempt up, so the
  // group says CRASHED, not ABORTED for attempts that ended differently (one stopped by hand).
  if (group.state.crashed && states.includes('CRASHED')) return 'CRASHED';
  return ended.every((s) => s === ended[0]) ? ended[0]! : 'ABORTED';
}
