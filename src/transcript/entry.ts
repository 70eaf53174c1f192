/**
 * One thing that happened in a run, as a person reads it: what the agent said, each tool call and
 * its result, what was refused, what the supervisor decided. Built from the ledger's files; the
 * `id` names the line it came from, so it stays the same however the transcript is paged.
 */
export type Entry =
  | (Base & { readonly kind: 'text'; readonly text: string; readonly cut?: Cut })
  /** A message the model got as the user's: the person's prompt, a Stop hook's feedback. */
  | (Base & { readonly kind: 'user'; readonly text: string; readonly cut?: Cut })
  | (Base & {
      readonly kind: 'tool_call';
      readonly tool_use_id: string;
      readonly tool: string;
      readonly input: unknown;
    })
  | (Base & {
      readonly kind: 'tool_result';
      readonly tool_use_id: string;
      readonly is_error: boolean;
      readonly text: string;
      /** Who refused the call, when it was refused: config, hook, sandbox, skill, gate. */
      readonly refused_by?: string;
      readonly cut?: Cut;
    })
  | (Base & { readonly kind: 'refusal'; readonly by: string; readonly tool: string; readonly reason: string })
  /** The supervisor's answer to a Stop: complete, abort, none (a [CONTINUE] is a correction). */
  | (Base & {
      readonly kind: 'decision';
      readonly decision: string;
      readonly source: string;
      readonly reason: string;
    })
  /** The supervisor sent the agent on: a [CONTINUE], a rule's correction, background work. */
  | (Base & {
      readonly kind: 'correction';
      readonly source: string;
      readonly reason: string;
      readonly text: string;
    })
  /** Messages a person queued (`agentbox inject`), delivered at a Stop. */
  | (Base & { readonly kind: 'inject'; readonly text: string })
  /** `duration_ms`: how long runs.verify took (logged since issue 40; older runs have none). */
  | (Base & {
      readonly kind: 'verify';
      readonly ok: boolean;
      readonly detail: string;
      readonly duration_ms?: number;
    })
  | (Base & {
      readonly kind: 'violation';
      readonly type: string;
      readonly detail: string;
      readonly action: string;
    })
  | (Base & { readonly kind: 'budget'; readonly reason: string })
  /** claude's own end of a turn: its answer, turns and cost. */
  | (Base & {
      readonly kind: 'result';
      readonly is_error: boolean;
      readonly text: string;
      readonly cost_usd: number | null;
      readonly cut?: Cut;
    })
  /** Any other line of events.jsonl: the run's lifecycle (session, ended, merged …). */
  | (Base & { readonly kind: 'event'; readonly event: string; readonly detail: string })
  /** A line too long to read in bounded memory: named, with where it is. */
  | (Base & {
      readonly kind: 'oversized';
      readonly file: string;
      readonly offset: number;
      readonly bytes: number;
    });

interface Base {
  readonly id: string;
  /** ISO time, or null when neither the line nor any line before it had one. */
  readonly at: string | null;
}

/** A text was cut: its whole length, and the entry id that `full` reads it back by. */
export interface Cut {
  readonly length: number;
  /** How many lines the whole text has (a Read result prints "… N more lines"). */
  readonly lines: number;
  readonly file: string;
  readonly offset: number;
  readonly bytes: number;
}

export type EntryKind = Entry['kind'];

/** How much of a tool result, an answer or a tool's input string the transcript carries. */
export const CUT_AT = 2000;

/** Where a cut text's line is, to read it whole later. */
export interface LineRef {
  readonly file: string;
  readonly offset: number;
  readonly bytes: number;
}

/** `text` cut to `max` characters, with what was cut; `max` Infinity keeps it whole. Pure. */
export function cutText(text: string, max: number, ref: LineRef): { text: string; cut?: Cut } {
  if (text.length <= max) return { text };
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return { text: text.slice(0, max), cut: { length: text.length, lines, ...ref } };
}

/** A tool's input with each long string cut (a Write's content, a long command). Pure. */
export function cutInput(input: unknown, max: number): unknown {
  if (typeof input === 'string')
    return input.length > max ? `${input.slice(0, max)}… (${input.length} characters)` : input;
  if (Array.isArray(input)) return input.map((v) => cutInput(v, max));
  if (typeof input === 'object' && input !== null)
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, cutInput(v, max)]));
  return input;
}
