import { type LeftOut, type LeftOutRecord, LISTED } from '../../git/too-large.js';
import type { EventLog } from '../../ledger/events.js';
import { type NestedRecord, nestedOfEvents } from './finalize-nested.js';

/** events.jsonl: the files an end left out of the patch as too large (src/git/too-large.ts). */
export const LEFT_OUT_EVENT = 'files_left_out';

/**
 * Logs what this end left out of the patch; also an end that left out nothing after one that did,
 * so the last event always speaks of the patch as it is now (a revision may have shrunk the file).
 */
export function logLeftOut(log: EventLog, leftOut: readonly LeftOut[]): void {
  if (leftOut.length === 0 && !log.read().some((e) => e.event === LEFT_OUT_EVENT)) return;
  log.append({
    event: LEFT_OUT_EVENT,
    files: leftOut.slice(0, LISTED),
    more: Math.max(0, leftOut.length - LISTED),
    bytes: leftOut.reduce((sum, f) => sum + f.bytes, 0),
  });
}

/** The last end's word on files left out, from events.jsonl; null when none were. Pure. */
export function leftOutOfEvents(events: readonly Record<string, unknown>[]): LeftOutRecord | null {
  const last = events.findLast((e) => e.event === LEFT_OUT_EVENT);
  if (!last || !Array.isArray(last.files)) return null;
  const files = last.files.flatMap((f: unknown) => {
    const { path, bytes, why } = (f ?? {}) as Record<string, unknown>;
    if (typeof path !== 'string' || typeof bytes !== 'number') return [];
    return [{ path, bytes, why: why === 'change' ? ('change' as const) : ('file' as const) }];
  });
  const more = typeof last.more === 'number' && last.more > 0 ? last.more : 0;
  return files.length + more > 0 ? { files, more } : null;
}

/** What the patch leaves out of the agent's work, from events.jsonl. Pure. */
export function outsidePatchOf(events: readonly Record<string, unknown>[]): {
  nested: NestedRecord[];
  leftOut: LeftOutRecord | null;
} {
  return { nested: nestedOfEvents(events), leftOut: leftOutOfEvents(events) };
}
