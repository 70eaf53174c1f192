import type { HookAnswer } from '../endpoint/server.js';
import type { FailureKind } from '../ledger/types.js';

/** How the supervisor ended the run, when it did. */
export type SupervisorEnd =
  | { readonly kind: 'complete'; readonly summary: string }
  | { readonly kind: 'abort'; readonly failure: FailureKind; readonly reason: string };

/** What the Stop checks found over the run, for the report and `show`. */
export interface CheckRecord {
  readonly violations: number;
  readonly corrections: number;
  /** The last verification's outcome, when one ran. */
  readonly verify: { readonly ok: boolean; readonly detail: string; readonly duration_ms?: number } | null;
}

/** One Stop decided: the answer to the hook, and the run's end when the decision ends it. */
export interface Decision {
  readonly answer: HookAnswer;
  readonly end?: SupervisorEnd;
}

/** The Stop hook's answer that makes Claude Code go on with exactly this text. */
export const block = (reason: string): HookAnswer => ({ decision: 'block', reason });

/** The fields every Stop decision's line in events.jsonl starts with. */
export type LogBase = Record<string, unknown>;
