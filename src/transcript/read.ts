import fs from 'node:fs';
import path from 'node:path';
import { type Cursor, START } from './cursor.js';
import { CUT_AT, type Entry, type LineRef } from './entry.js';
import { eventEntry } from './event-entries.js';
import { LineReader, MAX_LINE } from './lines.js';
import { lineEntries } from './stream-entries.js';

/**
 * A run's transcript read from its files, in constant memory: claude's lines (raw/stream.jsonl of
 * a headless run, or raw/transcript.jsonl, the copy of an interactive session's) and events.jsonl,
 * merged by time. Each file is read forward from the cursor's offset, one line at a time.
 * NOTE: while a run writes, a line of one file may land after a later line of the other was read:
 * a live reader gets it after, not in place (each page follows the one before).
 */
export interface Positioned {
  readonly entry: Entry;
  /** The cursor just past this entry. */
  readonly after: Cursor;
}

/** The file of claude's lines a transcript reads, how the ledger names it, and its ids' prefix. */
export interface ClaudeSource {
  readonly file: string;
  readonly rel: string;
  readonly prefix: string;
  /** Claude Code's own live file, in a folder the agent can write: a link there is not followed. */
  readonly noFollow?: boolean;
}

/**
 * Which of claude's files a run has: the interactive copy, else (`live`: a session still running)
 * Claude Code's own file it will be copied from, byte for byte (so ids stay), else the stream.
 */
export function claudeFile(runDir: string, live: string | null = null): ClaudeSource {
  const copy = path.join(runDir, 'raw', 'transcript.jsonl');
  if (fs.existsSync(copy)) return { file: copy, rel: 'raw/transcript.jsonl', prefix: 't' };
  if (live) return { file: live, rel: 'raw/transcript.jsonl', prefix: 't', noFollow: true };
  return { file: path.join(runDir, 'raw', 'stream.jsonl'), rel: 'raw/stream.jsonl', prefix: 's' };
}

/** claude's side: a line's entries, handed out one at a time, with the cursor after each. */
class ClaudeSide {
  private readonly reader: LineReader;
  private pending: Entry[] = [];
  private line = 0;
  private taken = 0;
  private lastAt: number | null;
  /** lastAt before the line being handed out: its entries were dated with it. */
  private lastBefore: number | null;
  private skip: number;

  /** Offsets of the last lines `keep` passed over: an untimed line kept after them takes their time. */
  private skipped: number[] = [];

  constructor(
    private readonly src: ClaudeSource,
    from: Cursor,
    /** Lines this is false for are not parsed and give no entry (a search's filter, search.ts). */
    private readonly keep?: (text: string) => boolean,
  ) {
    this.reader = new LineReader(src.file, from.s, MAX_LINE, src.noFollow);
    this.lastAt = from.t;
    this.lastBefore = from.t;
    this.skip = from.i;
  }

  head(): Entry | undefined {
    while (this.taken >= this.pending.length) {
      const line = this.reader.next();
      if (!line) return undefined;
      this.line = line.offset;
      this.lastBefore = this.lastAt;
      const ref = { file: this.src.rel, offset: line.offset, bytes: line.bytes };
      if (this.keep && (line.text === null || !this.keep(line.text))) {
        if (line.text !== null) this.skipped = [...this.skipped.slice(-3), line.offset];
        this.pending = [];
      } else {
        this.pending = this.entriesOf(line.text, ref);
      }
      this.taken = Math.min(this.skip, this.pending.length);
      this.skip = 0;
    }
    return this.pending[this.taken];
  }

  private entriesOf(text: string | null, ref: LineRef): Entry[] {
    const at = this.lastAt === null ? null : new Date(this.lastAt).toISOString();
    if (text === null) return [{ kind: 'oversized', id: `${this.src.prefix}${ref.offset}.0`, at, ...ref }];
    const parse = (lastAt: string | null) =>
      lineEntries({ text, ref, prefix: this.src.prefix, lastAt, max: CUT_AT });
    let read = parse(at);
    // An untimed line after lines a search skipped: it takes their time, as a full read would.
    const before = read.at === null && this.skipped.length > 0 ? this.skippedTime() : null;
    if (before !== null) read = { entries: parse(before).entries, at: before };
    this.skipped = [];
    if (read.at !== null) this.lastAt = Date.parse(read.at);
    return read.entries;
  }

  /** The time of the newest skipped line that has one, read again (rare: untimed lines are few). */
  private skippedTime(): string | null {
    for (const offset of [...this.skipped].reverse()) {
      const reader = new LineReader(this.src.file, offset, MAX_LINE, this.src.noFollow);
      try {
        const text = reader.next()?.text;
        const at = text
          ? lineEntries({ text, ref: { file: '', offset, bytes: 0 }, prefix: '', lastAt: null }).at
          : null;
        if (at !== null) return at;
      } finally {
        reader.close();
      }
    }
    return null;
  }

  take(e: number): Positioned {
    const entry = this.pending[this.taken++]!;
    const whole = this.taken >= this.pending.length;
    const after: Cursor = whole
      ? { s: this.reader.position, i: 0, e, t: this.lastAt }
      : { s: this.line, i: this.taken, e, t: this.lastBefore };
    return { entry, after };
  }

  /** Where this side stands now, for a cursor after the other side's entry. */
  mark(): Pick<Cursor, 's' | 'i' | 't'> {
    if (this.taken < this.pending.length) return { s: this.line, i: this.taken, t: this.lastBefore };
    return { s: this.reader.position, i: 0, t: this.lastAt };
  }

  close(): void {
    this.reader.close();
  }
}

/** events.jsonl's side: the next line that is an entry. */
class EventSide {
  private readonly reader: LineReader;
  private next: Entry | null | undefined;
  position: number;

  constructor(file: string, from: number) {
    this.reader = new LineReader(file, from);
    this.position = from;
  }

  head(): Entry | undefined {
    while (this.next === undefined) {
      const line = this.reader.next();
      if (!line) return undefined;
      const entry = line.text === null ? null : eventEntry(line.text, line.offset);
      if (entry) this.next = entry;
      else this.position = this.reader.position;
    }
    return this.next ?? undefined;
  }

  take(): Entry {
    const entry = this.next!;
    this.next = undefined;
    this.position = this.reader.position;
    return entry;
  }

  close(): void {
    this.reader.close();
  }
}

const timeOf = (e: Entry) => (e.at === null ? Number.NEGATIVE_INFINITY : Date.parse(e.at));

/**
 * Every entry from `from` on, in time order (claude's first on a tie). Close it by breaking out.
 * `live`: an ACTIVE interactive session's own transcript (src/transcript/live.ts).
 */
export function* transcriptEntries(
  runDir: string,
  from: Cursor = START,
  live: string | null = null,
  keep?: (text: string) => boolean,
): Generator<Positioned> {
  const claude = new ClaudeSide(claudeFile(runDir, live), from, keep);
  const events = new EventSide(path.join(runDir, 'events.jsonl'), from.e);
  try {
    for (;;) {
      const a = claude.head();
      const b = events.head();
      if (!a && !b) return;
      if (a && (!b || timeOf(a) <= timeOf(b))) {
        yield claude.take(events.position);
      } else {
        const entry = events.take();
        yield { entry, after: { ...claude.mark(), e: events.position } };
      }
    }
  } finally {
    claude.close();
    events.close();
  }
}

export interface Page {
  readonly entries: Entry[];
  /** The cursor to ask for the entries after these (the same one when there were none). */
  readonly next: Cursor;
  /** Whether more entries were already there when this page was read. */
  readonly more: boolean;
}

/** Up to `limit` entries after `from`. */
export function transcriptPage(
  runDir: string,
  from: Cursor,
  limit: number,
  live: string | null = null,
): Page {
  const entries: Entry[] = [];
  let next = from;
  let more = false;
  for (const { entry, after } of transcriptEntries(runDir, from, live)) {
    if (entries.length === limit) {
      more = true;
      break;
    }
    entries.push(entry);
    next = after;
  }
  return { entries, next, more };
}
