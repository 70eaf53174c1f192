import type { FailureKind, RunStatus } from '../ledger/types.js';

/**
 * The exit code of a run that ended badly, by its failure kind, when agentbox runs in CI (see
 * src/util/ci.ts): a pipeline can retry an API error and page someone for a violation without
 * parsing the log. Elsewhere a failed run exits 1, as it always has. docs/commands.md has the table.
 */
export const FAILURE_EXIT_CODES: Readonly<Record<FailureKind, number>> = {
  crashed: 10,
  killed: 11,
  timeout: 12,
  stalled: 13,
  api_error: 14,
  tool_error: 15,
  agent_abort: 16,
  supervisor: 17,
  budget: 18,
  violation: 19,
  setup: 20,
  io_error: 21,
};

/** 0 for DONE and REVIEW; a failure's own code; 1 for anything else that did not succeed. Pure. */
export function runExitCode(status: RunStatus, failure: FailureKind | null | undefined): number {
  if (status === 'DONE' || status === 'REVIEW') return 0;
  return failure ? FAILURE_EXIT_CODES[failure] : 1;
}
