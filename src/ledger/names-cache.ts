import type fs from 'node:fs';
import { asciiJson, CACHE_FILES, cacheFile, identityOf, readCache, writeCache } from './cache.js';
import { isObj } from './check.js';
import { isRunName } from './names.js';
import type { Ledger } from './paths.js';

/*
 * The run folder names, kept in `.agents/cache/run-names.json` with the stamp of runs/ they were
 * listed under: its identity, mtime in nanoseconds and link count. Creating, fetching or deleting
 * a run changes runs/'s mtime, so a stamp that still matches means the same names. NOTE: git's
 * racy-timestamp rule: a change made in the same clock tick as the listing could leave the mtime
 * as it was, so a stamp is kept only when runs/ was last changed RACY_NS before the listing began.
 */

const VERSION = 1;
const RACY_NS = 2_000_000_000n;

function stampOf(stat: fs.BigIntStats): string {
  return `${identityOf(stat)}:${stat.mtimeNs}:${stat.nlink}`;
}

/**
 * The names `list` returns for runs/ (whose stat the caller took BEFORE listing, so a change
 * made meanwhile shows as a stamp that no longer matches), from the cache when the stamp matches.
 */
export function cachedRunNames(ledger: Ledger, runsStat: fs.BigIntStats, list: () => string[]): string[] {
  const file = cacheFile(ledger, CACHE_FILES.names);
  const stamp = stampOf(runsStat);
  const cached = namesOf(readCache(file), stamp);
  if (cached) return cached;
  const listedAt = BigInt(Date.now()) * 1_000_000n;
  const names = list();
  if (runsStat.mtimeNs + RACY_NS <= listedAt) writeCache(file, asciiJson({ v: VERSION, stamp, names }));
  return names;
}

/** The cached names when the cache is ours and its stamp is this one; else null (list again). */
function namesOf(raw: unknown, stamp: string): string[] | null {
  if (!isObj(raw) || raw.v !== VERSION || raw.stamp !== stamp || !Array.isArray(raw.names)) return null;
  const names: unknown[] = raw.names;
  // Each name goes into a path: nothing but run names, newest first, come out of a hand-edited cache.
  let before: string | undefined;
  for (const name of names) {
    if (typeof name !== 'string' || !isRunName(name) || (before !== undefined && name >= before)) return null;
    before = name;
  }
  return names as string[];
}
