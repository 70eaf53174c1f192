import type { StreamSummary } from '../../claude/stream.js';
import type { Failure, RunStatus, RunType } from '../../ledger/types.js';

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
  /** The child could not be started at all (ENOENT, EACCES). */
  readonly spawnError?: string;
}

export type StopReason =
  | { readonly kind: 'finished' }
  | { readonly kind: 'interrupted'; readonly by: string }
  | { readonly kind: 'timeout'; readonly afterMs: number }
  | { readonly kind: 'aborted'; readonly reason: string; readonly failure?: Failure['kind'] }
  /** The ledger could not be written (disk full, read-only): the run is stopped rather than lose records. */
  | { readonly kind: 'io_error'; readonly message: string };

export interface Outcome {
  readonly status: RunStatus;
  readonly failure: Failure | null;
}

/**
 * How a run ended, from how claude exited, what its stream said and why agentbox stopped it.
 * Pure: the table of cases lives in test/unit/run-outcome.test.ts.
 */
export function classify(input: {
  type: RunType;
  /**
   * How claude exited; null when the run ended at claude's result line, before its exit (a
   * read-only run: src/run/execute.ts, endOfClaude): the result says how it went.
   */
  exit: ExitInfo | null;
  summary: StreamSummary;
  stop: StopReason;
  hasChanges: boolean;
  /**
   * A revision of the run (agentbox revise) ended: the review is a conversation, so a revision that
   * undid the whole change leaves the run in REVIEW (with no change) for the next word, not DONE
   * (which ended the conversation: revise refused it).
   */
  revised?: boolean;
  /** claude's last line on stderr: what an exit that failed says when its result line does not. */
  stderrLine?: string;
}): Outcome {
  const { exit, summary, stop } = input;
  const result = summary.result;
  const fail = (status: RunStatus, kind: Failure['kind'], message: string): Outcome => ({
    status,
    failure: { kind, message },
  });
  if (stop.kind === 'interrupted') return fail('ABORTED', 'killed', `stopped by ${stop.by}`);
  if (stop.kind === 'aborted') return fail('ABORTED', stop.failure ?? 'agent_abort', stop.reason);
  if (stop.kind === 'io_error') return fail('CRASHED', 'io_error', stop.message);
  if (stop.kind === 'timeout')
    return fail('CRASHED', 'timeout', `still running after ${Math.round(stop.afterMs / 1000)}s`);
  if (exit?.spawnError) return fail('CRASHED', 'crashed', `could not start claude: ${exit.spawnError}`);
  if (result?.terminalReason === 'api_error' || (result?.isError && result.apiErrorStatus)) {
    const status = result.apiErrorStatus ? ` (HTTP ${result.apiErrorStatus})` : '';
    return fail('CRASHED', 'api_error', `the model API failed${status}: ${firstLine(result.result)}`);
  }
  if (exit?.signal) return fail('CRASHED', 'killed', `claude was killed by ${exit.signal}`);
  if (exit && exit.code !== 0) {
    // Its result's words, else its stderr's last line (`claude --resume` of a session without a
    // conversation prints only "No conversation found …" there: the message ended at its colon).
    const said = (result && firstLine(result.result)) || firstLine(input.stderrLine ?? '');
    return fail('CRASHED', 'crashed', `claude exited with code ${exit.code}${said ? `: ${said}` : ''}`);
  }
  if (!result) return fail('CRASHED', 'crashed', 'claude exited without a result');
  if (result.isError)
    return fail(
      'CRASHED',
      'tool_error',
      `claude ended with an error (${result.subtype}): ${firstLine(result.result)}`,
    );
  if (input.type === 'fix' && (input.hasChanges || input.revised)) return { status: 'REVIEW', failure: null };
  return { status: 'DONE', failure: null };
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
