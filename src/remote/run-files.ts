import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from '../errors.js';
import type { RunState } from '../ledger/types.js';
import { isAlive } from '../process/reap.js';
import { appendNoFollow } from '../util/append.js';
import { openOwn } from '../util/read-own.js';
import { safeEntryPath } from './refs.js';

/*
 * A publication's files into a run folder, whole or not at all, and the run's events.jsonl as the
 * publication's lines followed by this machine's own.
 *
 * NOTE: a publication is a stranger's tree: a name the file system refuses (a component past 255
 * bytes), or a file where this folder has a folder, failed a fetch half way, after changes.patch
 * and events.jsonl were replaced: the patch changed with nothing said, and the refusals this
 * machine had logged were gone. So every file is first written into a staging folder inside the
 * run's (the same names, so the same file system says no to the same names), then renamed into
 * place once all of them are written.
 */

export const EVENTS_FILE = 'events.jsonl';

/** What this machine logged in a fetched run before `before.publication.events_bytes` existed. */
const GATE_EVENTS = new Set(['merge_refused', 'verified_here', 'human_gate_refused']);

/**
 * The run's new events.jsonl: the publication's lines, then the lines this machine appended after
 * the last publication's (a refused merge or rerun, a check made here). `own`: the bytes that are
 * the publication's (recorded in state.json, so the next fetch knows where this machine's begin).
 * `settle`, once the new file is in place (or not): a line this machine appended to the old file
 * after it was read here goes to the new one too (a `merge` refused while `fetch` ran), and the old
 * file is let go. NOTE: the old file stays open from its read to `settle`, so such a line, written
 * to the file renamed away, is still there to be read.
 */
export interface EventsUpdate {
  readonly bytes: Buffer;
  readonly own: number;
  settle(): void;
}

export function eventsAfter(
  dir: string,
  published: Buffer | undefined,
  before: RunState | null,
): EventsUpdate {
  const theirs = published ?? Buffer.alloc(0);
  const head =
    theirs.length === 0 || theirs.at(-1) === 0x0a ? theirs : Buffer.concat([theirs, Buffer.from('\n')]);
  const file = path.join(dir, EVENTS_FILE);
  const old = before === null ? null : openOld(file);
  const now = old === null ? Buffer.alloc(0) : fs.readFileSync(old);
  const mine = before === null || old === null ? Buffer.alloc(0) : ownLines(now, before, head);
  return {
    bytes: Buffer.concat([head, mine]),
    own: head.length,
    settle() {
      if (old === null) return;
      try {
        const late = replaced(file, old) ? readFrom(old, now.length) : Buffer.alloc(0);
        if (late.length > 0) appendNoFollow(file, late);
      } finally {
        fs.closeSync(old);
      }
    },
  };
}

function openOld(file: string): number | null {
  try {
    return openOwn(file);
  } catch {
    return null;
  }
}

/** Whether `file` is now another file than the one open as `fd`. */
function replaced(file: string, fd: number): boolean {
  try {
    return fs.lstatSync(file).ino !== fs.fstatSync(fd).ino;
  } catch {
    return false;
  }
}

/** What `fd` holds from `offset` on. */
function readFrom(fd: number, offset: number): Buffer {
  const size = fs.fstatSync(fd).size;
  if (size <= offset) return Buffer.alloc(0);
  const bytes = Buffer.alloc(size - offset);
  let got = 0;
  while (got < bytes.length) {
    const n = fs.readSync(fd, bytes, got, bytes.length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return bytes.subarray(0, got);
}

function ownLines(now: Buffer, before: RunState, published: Buffer): Buffer {
  const from = before.publication?.events_bytes;
  if (from !== undefined && from <= now.length) return now.subarray(from);
  // Fetched before agentbox recorded where its lines end: this machine's gate records, as then.
  const theirs = new Set(published.toString('utf8').split('\n'));
  const kept = now
    .toString('utf8')
    .split('\n')
    .filter((line) => !theirs.has(line) && GATE_EVENTS.has(eventOf(line)));
  return Buffer.from(kept.map((line) => `${line}\n`).join(''));
}

function eventOf(line: string): string {
  try {
    return String((JSON.parse(line) as { event?: unknown })?.event ?? '');
  } catch {
    return '';
  }
}

/**
 * Writes `files` (those whose path safeEntryPath allows) into `dir`, all or none: a string is why
 * none was. A new folder (`fresh`) is written in place and removed whole when it fails; a folder
 * here already gets every file staged first, then renamed into place.
 */
export function writeRunFiles(
  dir: string,
  files: ReadonlyMap<string, Buffer>,
  fresh: boolean,
): string | null {
  let staging: string | null = null;
  const wanted = [...files].filter(([file]) => safeEntryPath(file));
  try {
    // NOTE: a new folder is read by nobody before its state.json exists: no staging needed.
    if (fresh) fs.mkdirSync(dir);
    else {
      removeLeftStaging(dir);
      staging = fs.mkdtempSync(path.join(dir, `${STAGING}${process.pid}-`));
    }
    const to = staging ?? dir;
    for (const [file, bytes] of wanted) {
      const at = path.join(to, file);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, bytes, { flag: 'wx' });
      if (!fresh) fitsHere(dir, file);
    }
    for (const [file] of staging === null ? [] : wanted) {
      const target = path.join(dir, file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(path.join(to, file), target);
    }
  } catch (error) {
    // A new folder left half written would hold its name (and a row in status) for nothing.
    if (fresh) fs.rmSync(dir, { recursive: true, force: true });
    return `its files could not be written to ${dir} (${errnoCode(error) ?? (error as Error).message})`;
  } finally {
    if (staging !== null) fs.rmSync(staging, { recursive: true, force: true });
  }
  return null;
}

const STAGING = '.fetch-';

/**
 * A staging folder (or a state.json's temp file) a fetch left when it was killed half way, its
 * process gone: removed. NOTE: each name carries its fetch's pid, so another fetch's, still being
 * written, stays.
 */
function removeLeftStaging(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const pid = Number((/^\.fetch-(\d+)-/.exec(name) ?? /\.fetch-(\d+)$/.exec(name))?.[1]);
    if (!pid || pid === process.pid || isAlive(pid, null)) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/**
 * Throws when `file` cannot be renamed into the folder as it is: a folder where the file goes, or
 * a file (or a link: never followed) where one of its folders goes. Asked of the file system.
 */
function fitsHere(dir: string, file: string): void {
  const parts = file.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const at = path.join(dir, ...parts.slice(0, i));
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return;
      throw error;
    }
    const last = i === parts.length;
    if (last ? !stat.isFile() : !stat.isDirectory()) {
      throw Object.assign(new Error(`${at} is ${last ? 'not a file' : 'not a folder'}`), {
        code: last ? 'EISDIR' : 'ENOTDIR',
      });
    }
  }
}
