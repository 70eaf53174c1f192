/** One row of the fault suite's table (test/e2e/faults.test.ts), also read by scripts/fault-soak.ts. */
export interface Row {
  scenario: string;
  /** Landed kills (or runs, for the other scenarios). */
  tries: number;
  /** Kills that could not land (the run had ended) and were drawn again. */
  redrawn: number;
  /** Where the landed kills hit: the turn and what the run was doing. */
  points: Record<string, number>;
  outcomes: Record<string, number>;
  lost: string[];
}
