import fs from 'node:fs';
import { errnoCode, fsError } from '../errors.js';
import { asciiJson, CACHE_FILES, cacheFile, identityOf, readCache, writeCache } from './cache.js';
import { isObj } from './check.js';
import { fromColumns, toColumns } from './fold-columns.js';
import { eachIndexLine, type FoldedRun, foldEvent } from './index-log.js';
import { inListingOrder } from './order.js';
import type { Ledger } from './paths.js';

/*
 * INDEX.jsonl folded once, kept in `.agents/cache/index-fold.json` with what it was folded from:
 * the log's identity (dev:ino), the offset just past the last whole line folded, and the bytes
 * just before that offset. While the log is the same file, at least that long, and still has those
 * bytes there, only what was appended since is parsed (a log rewritten by hand fails the check
 * and is folded whole). A line not ended yet (a torn or unfinished write) is folded for this
 * reader but left out of the cache: it is read again next time, whole or joined to the next one.
 *
 * The runs are kept in listing order (newest first), and with `listed`: the stamp of runs/ (see
 * names-cache.ts) under which they were exactly the run folders. While the log has not grown and
 * runs/ still has that stamp, `agentbox status --all` is the cache alone: no listing of runs/, no
 * fold, no sort. The stamp is carried over while folding new lines adds or drops no run.
 */

// 3: the rows' `claimed_by` (a fetched run's publisher). 4: `status_claimed` (a status it claimed).
const VERSION = 4;
const TAIL_BYTES = 256;

/** What the cache records: the runs of the log's whole lines, and where those lines end. */
interface Whole {
  readonly runs: Map<string, FoldedRun>;
  readonly identity: string;
  readonly offset: number;
  readonly tail: Buffer;
}

export interface FoldedIndex {
  /** What the log says of each run now (a torn last line included). */
  readonly runs: Map<string, FoldedRun>;
  /** The log's size when it was read (INDEX.md's writer checks it did not grow meanwhile). */
  readonly bytes: number;
}

export interface Fold extends FoldedIndex {
  readonly whole: Whole;
  /** Whole lines were folded that the cache does not hold yet: it needs writing. */
  readonly changed: boolean;
  /** The runs/ stamp the cache's runs were listed under, while they are still the same runs. */
  readonly listed: string | null;
}

export type FoldRead =
  /** The cache answered alone: the runs of runs/ at the stamp asked for, in listing order. */
  { readonly kind: 'listed'; readonly runs: FoldedRun[] } | { readonly kind: 'folded'; readonly fold: Fold };

/** foldIndex(readIndexLog(ledger).events), from the cache when it still holds (and kept up to date). */
export function readFoldedIndex(ledger: Ledger): FoldedIndex {
  const read = readFold(ledger, null);
  // Without a stamp to match, the cache never answers alone.
  if (read.kind === 'listed') throw new Error('fold-cache: listed without a stamp (this is a bug)');
  if (read.fold.changed) saveFold(ledger, read.fold, read.fold.listed);
  return read.fold;
}

/**
 * The log folded, from the cache when it still holds; nothing is written. With `listedAt` (runs/'s
 * stamp now): when the cache holds the whole log and was listed under that stamp, its runs.
 */
export function readFold(ledger: Ledger, listedAt: string | null): FoldRead {
  let fd: number;
  try {
    fd = fs.openSync(ledger.indexJsonl, 'r');
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw fsError(error, 'read', ledger.indexJsonl);
    const runs = new Map<string, FoldedRun>();
    const whole = { runs, identity: '', offset: 0, tail: Buffer.alloc(0) };
    return { kind: 'folded', fold: { runs, bytes: 0, whole, changed: false, listed: null } };
  }
  try {
    return foldOpenLog(ledger, fd, listedAt);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the cache of `fold`'s whole lines, in listing order; `listed`: see FoldRead. */
export function saveFold(ledger: Ledger, fold: Fold, listed: string | null): void {
  const { runs, identity, offset, tail } = fold.whole;
  if (!identity) return;
  const ordered = inListingOrder([...runs.values()]);
  const cache = {
    v: VERSION,
    identity,
    offset,
    tail: tail.toString('base64'),
    listed,
    runs: toColumns(ordered),
  };
  writeCache(cacheFile(ledger, CACHE_FILES.fold), asciiJson(cache));
}

function foldOpenLog(ledger: Ledger, fd: number, listedAt: string | null): FoldRead {
  const stat = fs.fstatSync(fd, { bigint: true });
  const size = Number(stat.size);
  const identity = identityOf(stat);
  const cache = checkedCache(readCache(cacheFile(ledger, CACHE_FILES.fold)), identity, size);
  let from = cache ? cache.offset - cache.tail.length : 0;
  const read = (at: number) => readFrom(fd, at, size, ledger.indexJsonl);
  let buf = read(from);
  const fits = cache !== null && buf.subarray(0, cache.tail.length).equals(cache.tail);
  if (fits && cache.offset === size && listedAt !== null && cache.listed === listedAt) {
    const runs = fromColumns(cache.columns, true);
    if (runs) return { kind: 'listed', runs };
  }
  const cachedRuns = fits ? fromColumns(cache.columns, false) : null;
  let runs = new Map<string, FoldedRun>();
  let start = 0;
  if (cache && cachedRuns) {
    for (const run of cachedRuns) runs.set(run.name, run);
    start = cache.tail.length;
  } else if (from > 0) {
    from = 0;
    buf = read(0);
  }
  let sameRuns = cachedRuns !== null;
  const fold = (text: string) =>
    eachIndexLine(text, (event) => {
      // A run added or dropped: the runs are no longer those listed.
      const had = runs.has(event.run);
      if (event.event === 'deleted' ? had : !had) sameRuns = false;
      foldEvent(runs, event);
    });
  const end = Math.max(start, buf.lastIndexOf(0x0a) + 1);
  if (end > start) fold(buf.toString('utf8', start, end));
  const tail = buf.subarray(Math.max(0, end - TAIL_BYTES), end);
  const whole = { runs, identity, offset: from + end, tail };
  const listed = sameRuns && cache ? cache.listed : null;
  if (end < buf.length) {
    // A line not ended yet: this reader's alone, on a copy of what the cache will hold.
    runs = new Map(runs);
    fold(buf.toString('utf8', end));
  }
  return { kind: 'folded', fold: { runs, bytes: from + buf.length, whole, changed: end > start, listed } };
}

/** Bytes [from, to) of the open file, fewer if it shrank meanwhile. */
function readFrom(fd: number, from: number, to: number, file: string): Buffer {
  const buf = Buffer.allocUnsafe(Math.max(0, to - from));
  let got = 0;
  try {
    while (got < buf.length) {
      const n = fs.readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
  } catch (error) {
    throw fsError(error, 'read', file);
  }
  return buf.subarray(0, got);
}

interface CheckedCache {
  readonly offset: number;
  readonly tail: Buffer;
  readonly listed: string | null;
  /** Checked by fromColumns when used: the listing needs its run names checked too. */
  readonly columns: unknown;
}

/** The cache when it is one of ours, for this log and no longer than it; else null (fold it all). */
function checkedCache(raw: unknown, identity: string, size: number): CheckedCache | null {
  if (!isObj(raw) || raw.v !== VERSION || raw.identity !== identity) return null;
  const { offset, tail, listed } = raw;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || offset > size) return null;
  if (typeof tail !== 'string' || (listed !== null && typeof listed !== 'string')) return null;
  const tailBytes = Buffer.from(tail, 'base64');
  if (tailBytes.length !== Math.min(TAIL_BYTES, offset)) return null;
  return { offset, tail: tailBytes, listed, columns: raw.runs };
}
