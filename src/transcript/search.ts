import type { Entry } from './entry.js';
import { transcriptEntries } from './read.js';

/**
 * Search in a run's transcript, on the server: the page holds only the pages it has drawn (a
 * 10,000-call run is 30,000 entries, 25 MB of stream), so it could not search what it has not
 * loaded. The server reads the files once, forward, in constant memory, and answers the ids of the
 * matching entries in transcript order; the page pages down to the one it shows (web/transcript.js).
 */
export const MAX_QUERY = 200;
/** A search matching more entries than this says so ("2,000+") and stops reading. */
export const MAX_MATCHES = 2000;

export interface SearchResult {
  /** The matching entries' ids, in the transcript's order. */
  readonly matches: string[];
  /** MAX_MATCHES were found: the rest were not looked for. */
  readonly capped: boolean;
}

/** The query as a literal, case-insensitive pattern (the page highlights with the same one). Pure. */
export function searchPattern(query: string): RegExp {
  return new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
}

/** Every string in a tool's input, keys left out (the page shows the values). Pure. */
function strings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) strings(v, out);
  return out;
}

/**
 * The words of an entry a search looks at: what the agent, a tool, the supervisor or a person
 * wrote, as the transcript serves it (a text cut at 2,000 characters is searched as cut: what is
 * found can be shown). Not the page's own labels ("assistant", "✓"). Pure.
 */
export function entryWords(e: Entry): string[] {
  switch (e.kind) {
    case 'text':
    case 'user':
    case 'tool_result':
    case 'result':
    case 'inject':
      return [e.text];
    case 'tool_call':
      return [e.tool, ...strings(e.input, [])];
    case 'refusal':
      return [e.by, e.tool, e.reason];
    case 'decision':
      return [e.decision, e.source, e.reason];
    case 'correction':
      return [e.source, e.reason, e.text];
    case 'verify':
      return [e.detail];
    case 'violation':
      return [e.type, e.action, e.detail];
    case 'budget':
      return [e.reason];
    case 'event':
      return [e.event, e.detail];
    case 'oversized':
      return [];
  }
}

/**
 * A test on a raw line of claude's file that is false only when none of its entries can match: a
 * line is JSON as Claude Code writes it (JSON.stringify: only `"`, `\` and control characters are
 * escaped), so a query without those appears in the line as it appears in the text. Lines that
 * fail are not parsed — that is what makes a search over 25 MB take tens of ms, not seconds.
 * undefined: the query has a character JSON escapes; every line is parsed. Pure.
 */
export function rawFilter(pattern: RegExp, query: string): ((line: string) => boolean) | undefined {
  if (/["\\\x00-\x1f\ud800-\udfff]/.test(query)) return undefined;
  return (line) => pattern.test(line);
}

/** The entries of a run's transcript whose words contain `query` (any case), in order. */
export function searchTranscript(runDir: string, query: string, live: string | null = null): SearchResult {
  const pattern = searchPattern(query);
  const matches: string[] = [];
  for (const { entry } of transcriptEntries(runDir, undefined, live, rawFilter(pattern, query))) {
    if (!entryWords(entry).some((w) => pattern.test(w))) continue;
    if (matches.length === MAX_MATCHES) return { matches, capped: true };
    matches.push(entry.id);
  }
  return { matches, capped: false };
}
