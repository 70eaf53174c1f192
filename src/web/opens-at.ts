import fs from 'node:fs';
import path from 'node:path';
import type { RunState } from '../ledger/types.js';

/**
 * Where a run's page opens (issue 40, "error first"): a run that failed opens at what failed,
 * scrolled there and focused, not at its heading. A transcript entry is named by its id (an
 * events.jsonl line is `e<byte offset>`, as src/transcript/event-entries.ts names it), a panel of
 * the page by its element id. A run that ended well, or still runs, opens at the top: null.
 */
export type OpensAt =
  | { readonly entry: string; readonly why: string }
  | { readonly panel: 'failure' | 'not-passing'; readonly why: string };

/** One line of events.jsonl with the byte offset it starts at. */
export interface OffsetEvent {
  readonly offset: number;
  readonly value: Record<string, unknown>;
}

type Facts = Pick<RunState, 'status' | 'failure'> | null;

const last = (events: readonly OffsetEvent[], test: (e: Record<string, unknown>) => boolean) =>
  events.findLast((e) => test(e.value));

/**
 * The decision, in order: a failed runs.verify opens at its entry (the command's output); a run a
 * guard's violation or the budget ended, at that entry; one its supervisor aborted, at the abort
 * with its reason; any other failure (a crash, a timeout, a setup that failed) at the failure panel
 * under the heading; a run that did not pass for another reason, at the panel that says why. Pure.
 */
export function opensAt(state: Facts, events: readonly OffsetEvent[], notPassing: boolean): OpensAt | null {
  if (!state || state.status === 'ACTIVE') return null;
  const verify = last(events, (e) => e.event === 'verify');
  if (verify && verify.value.ok === false) return { entry: `e${verify.offset}`, why: 'runs.verify failed' };
  const kind = state.failure?.kind;
  const ender =
    kind === 'violation'
      ? last(events, (e) => e.event === 'violation')
      : kind === 'budget'
        ? last(events, (e) => e.event === 'budget')
        : state.status === 'ABORTED'
          ? last(events, (e) => e.decision === 'abort')
          : undefined;
  if (ender) return { entry: `e${ender.offset}`, why: `${kind}: ${state.failure?.message ?? ''}`.trim() };
  if (state.failure) return { panel: 'failure', why: `${state.failure.kind}: ${state.failure.message}` };
  if (notPassing) return { panel: 'not-passing', why: 'the run did not pass' };
  return null;
}

/** events.jsonl's lines with their byte offsets; a line that is not a JSON object is left out. */
export function eventsWithOffsets(runDir: string): OffsetEvent[] {
  let data: Buffer;
  try {
    data = fs.readFileSync(path.join(runDir, 'events.jsonl'));
  } catch {
    return [];
  }
  const out: OffsetEvent[] = [];
  for (let start = 0; start < data.length; ) {
    const end = data.indexOf(10, start);
    const stop = end === -1 ? data.length : end;
    try {
      const value: unknown = JSON.parse(data.subarray(start, stop).toString('utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value))
        out.push({ offset: start, value: value as Record<string, unknown> });
    } catch {
      // A torn last line (the run is writing it) or a broken one: the transcript skips it too.
    }
    start = stop + 1;
  }
  return out;
}
