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

/*
 * NOTE: why the cache (6 MB with 10,000 runs) is read and written 32 KB at a time, never through
 * one Buffer of its size. A Buffer is glibc malloc's; one over 128 KB is its own mmap, and freeing
 * it raises malloc's mmap threshold to its size for the life of the process (glibc's dynamic
 * threshold): `agentbox ui`, which lives for days, then took every later allocation up to 6 MB
 * from its heap, which fragments and stays resident — 17.5 MB of malloc heap idle instead of 3.5
 * (measured with gdb on munmap: node::fs::WriteFileUtf8 freeing 6 MB; docs/benchmarks.md).
 */
const PART = 32 * 1024;

/** The file's text, decoded a part at a time (the text itself lives in V8's heap, not malloc's). */
function readText(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(PART);
    const parts: string[] = [];
    let ascii = true;
    const raw: Buffer[] = [];
    for (let n = fs.readSync(fd, buf, 0, PART, null); n > 0; n = fs.readSync(fd, buf, 0, PART, null)) {
      const part = buf.subarray(0, n);
      // ASCII (what asciiJson writes) decodes 4× faster as latin1 than as UTF-8 with accents.
      if (ascii && isAscii(part)) parts.push(part.toString('latin1'));
      else {
        ascii = false;
        raw.push(Buffer.from(part));
      }
    }
    // Not ASCII (a cache written by hand or an older agentbox): decoded as UTF-8, a rare slow path.
    return ascii
      ? parts.join('')
      : Buffer.concat([Buffer.from(parts.join(''), 'latin1'), ...raw]).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** `text` written to a new file, a part at a time. */
function writeText(file: string, text: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let at = 0; at < text.length; at += PART) {
      const part = Buffer.from(text.slice(at, at + PART), 'utf8');
      for (let done = 0; done < part.length; ) done += fs.writeSync(fd, part, done);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The cache's JSON, or undefined when it is missing, unreadable or not JSON. */
export function readCache(file: string): unknown {
  try {
    return JSON.parse(readText(file));
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
    writeText(temp, data);
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
