import type { FailureKind, RunStatus, RunType } from '../ledger/types.js';

/**
 * What to do with a run after agentbox (or the machine) went down while it ran (seed 004 SUP-6):
 * a run whose supervisor died with its work in a consistent state is resumed in its session; one
 * whose artifacts are incomplete has its worktree put back to the last checkpoint and the task
 * replayed in a new session; a run waiting for a person keeps waiting. Pure: facts → action; the
 * table of cases is in test/unit/recover-decide.test.ts.
 */
export type RecoveryAction =
  | { readonly kind: 'none'; readonly reason: string }
  | { readonly kind: 'keep_waiting'; readonly reason: string }
  | { readonly kind: 'resume'; readonly reason: string }
  | { readonly kind: 'rollback_replay'; readonly reason: string; readonly to: 'checkpoint' | 'start' | null }
  | { readonly kind: 'give_up'; readonly reason: string };

export interface RecoveryFacts {
  readonly status: RunStatus;
  readonly type: RunType;
  readonly failureKind: FailureKind | null;
  readonly supervisorAlive: boolean;
  /** The session's transcript holds a conversation `--resume` can continue. */
  readonly sessionResumable: boolean;
  /** raw/stream.jsonl ends with a whole line (a crash mid-write cuts one). */
  readonly streamWhole: boolean;
  /** A fix run's worktree; null for runs without one. */
  readonly worktree: { readonly exists: boolean; readonly busy: string | null } | null;
  readonly hasCheckpoint: boolean;
  /** Earlier recoveries of this run that resumed or replayed it. */
  readonly attempts: number;
  /** The machine it ran on, when it was fetched from a remote (agentbox fetch); else null. */
  readonly ranElsewhere?: string | null;
}

/** A run's decision with the facts it was made from. */
export interface Decision {
  readonly name: string;
  readonly facts: RecoveryFacts;
  readonly action: RecoveryAction;
}

export const MAX_RECOVERIES = 3;

/** Failures that mean "the process died", not a decision (timeout, budget, abort, API error). */
const CRASH_KINDS: ReadonlySet<FailureKind> = new Set(['crashed', 'stalled', 'killed']);

/**
 * Whether a run can be resumed or replayed at all, from what its summary says (status, failure
 * kind, type, where it ran): the only runs decideRecovery can answer `resume` or `rollback_replay`
 * for (test/unit/recover-decide.test.ts holds the two together). Lets a caller that wants only
 * those skip reading every other run. A type not known (null) could be any. Pure.
 */
export function mayResume(
  status: RunStatus | null,
  failureKind: FailureKind | null,
  type: RunType | null,
  ranElsewhere: string | null,
): boolean {
  if (type === 'interactive' || ranElsewhere) return false;
  if (status === 'ACTIVE') return true;
  return (
    (status === 'CRASHED' || status === 'STALLED') && failureKind !== null && CRASH_KINDS.has(failureKind)
  );
}

export function decideRecovery(f: RecoveryFacts): RecoveryAction {
  // Its session, worktree and processes are on that machine: nothing here can take it up.
  if (f.ranElsewhere) {
    return { kind: 'none', reason: `it ran on ${f.ranElsewhere}: agentbox fetch brings its state` };
  }
  if (f.status === 'REVIEW') {
    return { kind: 'keep_waiting', reason: 'its changes wait for you: agentbox merge or agentbox discard' };
  }
  if ((f.status === 'ACTIVE' || f.status === 'STALLED') && f.supervisorAlive) {
    return { kind: 'none', reason: 'it is running (its supervisor is alive)' };
  }
  const stale =
    f.status === 'ACTIVE' ||
    ((f.status === 'CRASHED' || f.status === 'STALLED') &&
      f.failureKind !== null &&
      CRASH_KINDS.has(f.failureKind));
  if (!stale) {
    return {
      kind: 'none',
      reason: `${f.status}${f.failureKind ? ` (${f.failureKind})` : ''}: not a crash to recover`,
    };
  }
  if (f.type === 'interactive') {
    return {
      kind: 'keep_waiting',
      reason: 'an interactive session needs you at a terminal: agentbox start --resume',
    };
  }
  if (f.attempts >= MAX_RECOVERIES) {
    return {
      kind: 'give_up',
      reason: `recovered ${f.attempts} times already; look at it (agentbox show) before trying again`,
    };
  }
  if (f.worktree && !f.worktree.exists) {
    return { kind: 'give_up', reason: 'its worktree is gone; start a new run (its patch, if any, is kept)' };
  }
  const missing = [
    !f.sessionResumable && 'its session has no conversation to resume',
    !f.streamWhole && 'its stream log ends in a cut line',
    f.worktree?.busy && `in its worktree ${f.worktree.busy}`,
  ].filter((m): m is string => Boolean(m));
  if (missing.length === 0) {
    return { kind: 'resume', reason: 'its session and files are consistent: it goes on where it stopped' };
  }
  return {
    kind: 'rollback_replay',
    reason: `${missing.join('; ')}: ${
      f.worktree
        ? f.hasCheckpoint
          ? 'its worktree goes back to the last checkpoint'
          : 'its worktree goes back to where it started'
        : 'nothing to roll back'
    } and the task is replayed in a new session`,
    to: f.worktree ? (f.hasCheckpoint ? 'checkpoint' : 'start') : null,
  };
}
