import { isAscii } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from './paths.js';

/**
 * `.agents/cache/`: data derived from the ledger to answer `agentbox status` fast, safe to delete
 * at any time (the next reader rebuilds it). Every read is checked against what it was derived
 * from, and a cache that is missing, damaged, foreign or stale reads as none: the caller falls
 * back to the ledger itself. Writing is best effort: a read-only ledger is read the slow way.
 */
export const CACHE_DIR = 'cache';

/** The files in it: the folded INDEX.jsonl (fold-cache.ts) and the run folder names (names-cache.ts). */
export const CACHE_FILES = { fold: 'index-fold.json', names: 'run-names.json' } as const;

export function cacheFile(ledger: Ledger, name: string): string {
  return path.join(ledger.dir, CACHE_DIR, name);
}

/** The cache's JSON, or undefined when it is missing, unreadable or not JSON. */
export function readCache(file: string): unknown {
  try {
    const buf = fs.readFileSync(file);
    // NOTE: decoding UTF-8 with accents in it costs 4× decoding ASCII (3.5 ms for 10,000 runs).
    return JSON.parse(buf.toString(isAscii(buf) ? 'latin1' : 'utf8'));
  } catch {
    return undefined;
  }
}

/** JSON with every character past ASCII escaped (`\u00e9`): the same value, read back faster. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Writes the cache whole or not at all; a failure (read-only ledger, full disk) is ignored. */
export function writeCache(file: string, data: string): void {
  try {
    // NOTE: not recursive: a ledger deleted meanwhile must not be brought back as a bare cache folder.
    fs.mkdirSync(path.dirname(file), { recursive: false });
  } catch {
    // It exists (the usual case), or the write below fails as well.
  }
  // NOTE: not util/fs.ts's writeAtomicSync: loading write-file-atomic and signal-exit would cost
  // every `agentbox status` a few ms (node -e: 9 ms unbundled), and derived data needs neither its
  // fsync nor its chown. A temp file of this process's own, then a rename: readers see the old
  // cache or the new one.
  const temp = `${file}.${process.pid}-${++written}-${Math.random().toString(36).slice(2, 8)}.tmp`;
  try {
    fs.writeFileSync(temp, data);
    fs.renameSync(temp, file);
  } catch {
    // Derived data: the next reader derives it again.
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // Nothing could be written there either.
    }
  }
}

let written = 0;

/** A file's identity as the kernel knows it: a rename-over or a new file changes it. */
export function identityOf(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}`;
}
