import type { Failure, FailureKind, RunStatus } from '../ledger/types.js';

/** A failure's kind, or the failure itself (whose own `next` wins). */
type FailureOf = FailureKind | Pick<Failure, 'kind' | 'next'> | null;

/**
 * What is left to do with a run that ended, by how it ended: a failure's kind says whether resuming
 * can help (an API or login error needs the login first; a violation needs a look at what the agent
 * did). Null: nothing is left (a read-only run that succeeded, a decided one). Pure: the end of a
 * run, `watch`, the notification and `agentbox show` all say it with this.
 */
export function nextAction(
  status: RunStatus,
  id: string,
  failureOf?: FailureOf,
  setupLog?: string,
  /** false: a fix run in REVIEW has no change (a revision undid it): nothing to diff or merge. */
  changed = true,
): string | null {
  if (failureOf && typeof failureOf === 'object' && failureOf.next) return failureOf.next;
  const failure = failureOf && typeof failureOf === 'object' ? failureOf.kind : failureOf;
  // claude never started: there is no session to resume.
  if (failure === 'setup')
    return status === 'FAILED'
      ? `fix runs.setup in agentbox.yaml (${setupLog ? `its output: ${setupLog}` : 'try the command in your own tree first'}), then start the run again`
      : 'start the run again';
  switch (status) {
    case 'REVIEW':
      return changed
        ? `agentbox diff ${id}, then agentbox merge ${id}`
        : `no change is left: revise it (agentbox revise ${id} "…"), or discard it (agentbox discard ${id})`;
    case 'CRASHED':
    case 'ABORTED':
    case 'STALLED':
      switch (failure) {
        case 'api_error':
          return `check that Claude Code can reach the model (agentbox doctor; claude auth login or ANTHROPIC_API_KEY), then agentbox resume ${id}`;
        case 'violation':
        case 'agent_abort':
          return `agentbox show ${id} (its patch and report are kept; resume only to go on with more instructions: agentbox resume ${id} "<more>")`;
        case 'io_error':
          return `free disk space or make .agents writable, then agentbox resume ${id}`;
        default:
          return `agentbox resume ${id}`;
      }
    default:
      return null;
  }
}

/** After a run ends (its summary, `watch`, the notification): what to do, else where to look. Pure. */
export function nextStep(status: RunStatus, id: string, failure?: FailureOf, changed = true): string {
  return nextAction(status, id, failure, undefined, changed) ?? `agentbox show ${id}`;
}

/**
 * How to go on with more words for a run that is not running (`inject` of one, `resume` of one that
 * cannot be resumed): a fix run in REVIEW takes them as a review; a crashed, aborted or stalled run
 * is resumed with them; one that ended otherwise is done with, and a new run does more; a fetched
 * one is started anew. Each names a command the run allows (inject and resume sent a REVIEW run to
 * each other). Pure.
 */
export function moreWordsFor(
  run: { status: RunStatus | null; type: string; id: string; ranOn?: string | undefined },
  text: string,
): string {
  const words = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  // A fetched run's session and worktree are on the machine it ran on: nothing goes on here.
  if (run.ranOn !== undefined)
    return `it ran on ${run.ranOn}, where its session is: start its task anew here with agentbox rerun ${run.id}`;
  if (run.status === 'REVIEW' && run.type === 'fix')
    return `give it to the run as a review instead: agentbox revise ${run.id} "${words}"`;
  if (
    run.status === 'CRASHED' ||
    run.status === 'ABORTED' ||
    run.status === 'STALLED' ||
    run.status === 'ACTIVE'
  )
    return `continue it with the message instead: agentbox resume ${run.id} "${words}"`;
  return `it has ended${run.status ? ` (${run.status})` : ''}: start a new run for more work (agentbox ${run.type} "…", or its task anew: agentbox rerun ${run.id})`;
}
