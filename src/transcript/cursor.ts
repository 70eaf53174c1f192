import { AgentboxError } from '../errors.js';

/**
 * Where a reader of a transcript stopped: the byte offset of claude's next line and how many of
 * its entries were already read, the offset of events.jsonl's next line, and the time of the last
 * timed line before (lines without a time take it). Written `s-i-e[-t]`; clients keep it opaque.
 */
export interface Cursor {
  readonly s: number;
  readonly i: number;
  readonly e: number;
  readonly t: number | null;
}

export const START: Cursor = { s: 0, i: 0, e: 0, t: null };

export function formatCursor(c: Cursor): string {
  return `${c.s}-${c.i}-${c.e}${c.t === null ? '' : `-${c.t}`}`;
}

/** A cursor from its text; a clear error for anything else. Pure. */
export function parseCursor(text: string | null | undefined): Cursor {
  if (text === null || text === undefined || text === '') return START;
  const m = /^(\d{1,15})-(\d{1,6})-(\d{1,15})(?:-(\d{1,15}))?$/.exec(text);
  if (!m) {
    throw new AgentboxError('USAGE', `not a transcript cursor: "${text.slice(0, 80)}"`, {
      hint: 'pass the "next" of an earlier page (like 40213-0-1877), or leave it out to start at the beginning',
    });
  }
  return { s: Number(m[1]), i: Number(m[2]), e: Number(m[3]), t: m[4] === undefined ? null : Number(m[4]) };
}
