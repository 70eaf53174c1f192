import fs from 'node:fs';
import { asciiJson, CACHE_FILES, cacheFile, identityOf, writeCache } from './cache.js';
import { isObj } from './check.js';
import { isRunName } from './names.js';
import type { Ledger } from './paths.js';

/*
 * The run folder names, kept in `.agents/cache/run-names.json` with the stamp of runs/ they were
 * listed under: its identity, mtime in nanoseconds and link count. Creating, fetching or deleting
 * a run changes runs/'s mtime, so a stamp that still matches means the same names. NOTE: git's
 * racy-timestamp rule: a change made in the same clock tick as the listing could leave the mtime
 * as it was, so a stamp is kept only when runs/ was last changed RACY_NS before the listing began.
 *
 * The stamp, the count and the newest HEAD names as JSON on the first line, then every name, one
 * per line (run names hold no line break; splitting 10,000 of them takes a quarter of JSON.parse's
 * time). The default view wants ~20 of 10,000: it reads the first line only.
 */

const VERSION = 3;
const RACY_NS = 2_000_000_000n;
const HEAD = 200;

/** Names newest first: all of them, or at least the newest `want` when there are more. */
export interface RunNames {
  readonly names: string[];
  readonly total: number;
}

/** runs/'s stamp: what changes when a run folder appears or goes, or runs/ is replaced. */
export function runsStamp(stat: fs.BigIntStats): string {
  return `${identityOf(stat)}:${stat.mtimeNs}:${stat.nlink}`;
}

/** The clock now, as mtimes count it: taken BEFORE listing, for settled(). */
export function clockNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** Whether runs/'s stamp can be kept for a listing begun at `listedAt`: the racy rule above. */
export function settled(stat: fs.BigIntStats, listedAt: bigint): boolean {
  return stat.mtimeNs + RACY_NS <= listedAt;
}

/**
 * The names `list` returns for runs/ (whose stat the caller took BEFORE listing, so a change
 * made meanwhile shows as a stamp that no longer matches), from the cache when the stamp matches.
 */
export function cachedRunNames(
  ledger: Ledger,
  runsStat: fs.BigIntStats,
  list: () => string[],
  want = Number.POSITIVE_INFINITY,
): RunNames {
  const file = cacheFile(ledger, CACHE_FILES.names);
  const stamp = runsStamp(runsStat);
  const cached = readNames(file, stamp, want);
  if (cached) return cached;
  const listedAt = clockNs();
  const names = list();
  if (settled(runsStat, listedAt)) {
    const head = asciiJson({ v: VERSION, stamp, total: names.length, head: names.slice(0, HEAD) });
    writeCache(file, `${head}\n${names.join('\n')}`);
  }
  return { names, total: names.length };
}

/** The cached names when the cache is ours and its stamp is this one; else null (list again). */
function readNames(file: string, stamp: string, want: number): RunNames | null {
  try {
    // NOTE: latin1: the cache is written as ASCII; anything else fails the name check below.
    const buf = fs.readFileSync(file);
    const end = buf.indexOf(0x0a);
    if (end < 0) return null;
    const first: unknown = JSON.parse(buf.toString('latin1', 0, end));
    if (!isObj(first) || first.v !== VERSION || first.stamp !== stamp) return null;
    const { total, head } = first;
    if (typeof total !== 'number' || !Array.isArray(head)) return null;
    const enough = want <= head.length || head.length === total;
    const names: unknown = enough ? head : total === 0 ? [] : buf.toString('latin1', end + 1).split('\n');
    if (!runNames(names) || (enough ? names.length !== Math.min(total, HEAD) : names.length !== total))
      return null;
    return { names, total };
  } catch {
    return null;
  }
}

/** Each name goes into a path: nothing but run names, newest first, come out of a hand-edited cache. */
function runNames(names: unknown): names is string[] {
  if (!Array.isArray(names)) return false;
  let before: string | undefined;
  for (const name of names) {
    if (typeof name !== 'string' || !isRunName(name) || (before !== undefined && name >= before))
      return false;
    before = name;
  }
  return true;
}
