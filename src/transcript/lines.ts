import fs from 'node:fs';

/** One line of a file: where it starts, its length with the newline, and its text. */
export interface FileLine {
  readonly offset: number;
  readonly bytes: number;
  /** null: longer than the reader's limit, skipped without being held. */
  readonly text: string | null;
}

const CHUNK = 64 * 1024;
/** A line longer than this is named, not read: memory stays bounded whatever an agent printed. */
export const MAX_LINE = 16 * 1024 * 1024;

/**
 * Reads a file's whole lines one at a time from a byte offset, holding one chunk and at most one
 * line: a 1 GB stream costs what a 1 KB one does. A last line without its newline (a live writer
 * mid-write, or a crash) is not returned; the next call tries it again from its start.
 */
export class LineReader {
  private fd: number | null | undefined;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  /** File offset of buf[0], and the unread part of buf. */
  private chunkAt: number;
  private from = 0;
  private to = 0;

  constructor(
    private readonly file: string,
    /** Where the next line starts. */
    public position: number,
    private readonly maxLine = MAX_LINE,
    /** Refuse a symbolic link (ELOOP): the file is in a folder someone else can write. */
    private readonly noFollow = false,
  ) {
    this.chunkAt = position;
  }

  next(): FileLine | null {
    const fd = this.open();
    if (fd === null) return null;
    const start = this.position;
    const parts: Buffer[] = [];
    let held = 0;
    let oversized = false;
    for (;;) {
      if (this.from >= this.to && !this.fill(fd)) {
        // The line has no end yet: forget what was read of it, and start there next time.
        this.chunkAt = start;
        this.from = this.to = 0;
        return null;
      }
      const nl = this.buf.indexOf(10, this.from);
      const end = nl === -1 || nl >= this.to ? this.to : nl;
      if (end < this.to && parts.length === 0 && !oversized) {
        // The whole line is in this chunk (most are): decoded from it, with no copy to collect.
        const text = this.buf.toString('utf8', this.from, end);
        this.from = end + 1;
        this.position = this.chunkAt + this.from;
        return {
          offset: start,
          bytes: this.position - start,
          text: text.endsWith('\r') ? text.slice(0, -1) : text,
        };
      }
      if (!oversized) {
        parts.push(Buffer.from(this.buf.subarray(this.from, end)));
        held += end - this.from;
        if (held > this.maxLine) {
          oversized = true;
          parts.length = 0;
        }
      }
      if (end === this.to) {
        this.from = this.to;
        continue;
      }
      this.from = end + 1;
      this.position = this.chunkAt + this.from;
      const bytes = this.position - start;
      if (oversized) return { offset: start, bytes, text: null };
      const text = Buffer.concat(parts).toString('utf8');
      return { offset: start, bytes, text: text.endsWith('\r') ? text.slice(0, -1) : text };
    }
  }

  close(): void {
    if (typeof this.fd === 'number') fs.closeSync(this.fd);
    this.fd = null;
  }

  private open(): number | null {
    if (this.fd !== undefined) return this.fd;
    try {
      const flags =
        fs.constants.O_RDONLY | (this.noFollow ? fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK : 0);
      this.fd = fs.openSync(this.file, flags);
      if (this.noFollow && !fs.fstatSync(this.fd).isFile()) {
        fs.closeSync(this.fd);
        this.fd = null;
      }
    } catch {
      // No file yet (a run that has not started claude) reads as empty; it is tried again later.
      // A link where a no-follow file should be reads as empty too.
      return null;
    }
    return this.fd;
  }

  /** Reads the next chunk after what buf holds; false at the end of the file. */
  private fill(fd: number): boolean {
    const at = this.chunkAt + this.to;
    const n = fs.readSync(fd, this.buf, 0, CHUNK, at);
    if (n === 0) return false;
    this.chunkAt = at;
    this.from = 0;
    this.to = n;
    return true;
  }
}
