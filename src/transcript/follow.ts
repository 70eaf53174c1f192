import { type Failure, type RunDetails, type RunStatus, readState } from '../ledger/index.js';
import { type ToolErrors, toolErrorsOf } from '../present/tool-errors.js';
import { isAlive } from '../process/reap.js';
import type { Env } from '../util/env.js';
import { START } from './cursor.js';
import type { Entry } from './entry.js';
import { liveTranscript } from './live.js';
import { transcriptPage } from './read.js';

export type TranscriptSighting =
  | { readonly kind: 'entry'; readonly entry: Entry }
  | {
      readonly kind: 'ended';
      readonly status: RunStatus;
      readonly failure: Failure | null;
      readonly toolErrors: ToolErrors;
    }
  /** Its agentbox process is gone without recording an end. */
  | { readonly kind: 'gone' };

/**
 * A run's transcript as it grows, from its start, a page at a time by cursor (constant memory),
 * until the run ends; a finished run yields its whole transcript and its end. Reads only.
 */
export async function* followTranscript(
  run: RunDetails,
  env: Env,
  pollMs = 250,
): AsyncGenerator<TranscriptSighting> {
  let cursor = START;
  for (;;) {
    // Read before the files: a run that had ended by then has written all it will.
    const state = readState(run.dir);
    const live = state ? liveTranscript({ ...run, state }, env) : null;
    for (;;) {
      const page = transcriptPage(run.dir, cursor, 500, live);
      for (const entry of page.entries) yield { kind: 'entry', entry };
      cursor = page.next;
      if (!page.more) break;
    }
    if (state && state.status !== 'ACTIVE' && state.status !== 'STALLED') {
      yield { kind: 'ended', status: state.status, failure: state.failure, toolErrors: toolErrorsOf(state) };
      return;
    }
    if (state && state.pid !== null && !isAlive(state.pid, state.pid_start)) {
      yield { kind: 'gone' };
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
