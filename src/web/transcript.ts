import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import { toolTarget } from '../present/live.js';
import { formatCursor, parseCursor } from '../transcript/cursor.js';
import type { Entry } from '../transcript/entry.js';
import { fullEntry } from '../transcript/full.js';
import { liveTranscript } from '../transcript/live.js';
import { claudeFile, transcriptPage } from '../transcript/read.js';
import { MAX_QUERY, searchTranscript } from '../transcript/search.js';
import type { Env } from '../util/env.js';
import { HttpError } from './http.js';

const LIMIT = 200;
const MAX_LIMIT = 1000;

/** `limit=`: a whole number from 1 to MAX_LIMIT; absent: LIMIT. */
function limitOf(text: string | null): number {
  if (text === null || text === '') return LIMIT;
  const n = Number(text);
  if (!/^\d{1,4}$/.test(text) || n < 1 || n > MAX_LIMIT)
    throw new HttpError(
      400,
      `limit must be a whole number from 1 to ${MAX_LIMIT}, not "${text.slice(0, 40)}"`,
    );
  return n;
}

/** A tool call with what it works on, said once here as every view of agentbox says it (toolTarget). */
const withTarget = (e: Entry) => (e.kind === 'tool_call' ? { ...e, target: toolTarget(e.input) ?? '' } : e);

/**
 * `GET /api/runs/<run>/transcript?after=<cursor>&limit=<n>`: the run's transcript a page at a time,
 * read from the files at each request (nothing is held between them: constant memory whatever the
 * stream's size). `next` is the cursor to ask with next; `more` says entries were already waiting.
 * While the run is ACTIVE, `/api/events` sends a `change` for it as its files grow: ask again then
 * with the last `next` (docs/web-ui.md).
 */
export function transcriptOf(ledger: Ledger, env: Env, ref: string, params: URLSearchParams) {
  const run = readRun(ledger, resolveRun(ledger, ref));
  const from = parseCursor(params.get('after'));
  const live = liveTranscript(run, env);
  const page = transcriptPage(run.dir, from, limitOf(params.get('limit')), live);
  return {
    name: run.name,
    source: claudeFile(run.dir, live).rel,
    active: run.state?.status === 'ACTIVE',
    entries: page.entries.map(withTarget),
    next: formatCursor(page.next),
    more: page.more,
  };
}

/** `GET /api/runs/<run>/transcript/<entry id>`: one entry whose text was cut, whole. */
export function transcriptEntryOf(ledger: Ledger, env: Env, ref: string, id: string) {
  const run = readRun(ledger, resolveRun(ledger, ref));
  return { name: run.name, entry: withTarget(fullEntry(run.dir, id, liveTranscript(run, env))) };
}

/**
 * `GET /api/runs/<run>/transcript/search?q=<text>`: the ids of the entries whose words contain
 * `q` (any case), in the transcript's order, read from the files at each request
 * (src/transcript/search.ts); `capped` when MAX_MATCHES were found and the rest not looked for.
 */
export function transcriptSearchOf(ledger: Ledger, env: Env, ref: string, params: URLSearchParams) {
  const q = params.get('q') ?? '';
  if (q.trim() === '' || q.length > MAX_QUERY)
    throw new HttpError(
      400,
      `q must be 1 to ${MAX_QUERY} characters, not ${q.trim() === '' ? 'empty' : `${q.length} characters`}`,
    );
  const run = readRun(ledger, resolveRun(ledger, ref));
  const found = searchTranscript(run.dir, q, liveTranscript(run, env));
  return { name: run.name, q, matches: found.matches, capped: found.capped };
}
