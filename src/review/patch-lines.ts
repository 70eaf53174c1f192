import fs from 'node:fs';
import { errnoCode, fsError } from '../errors.js';

/*
 * How big a change is: the lines a patch adds and removes, read in chunks (an attempt's patch can
 * be hundreds of megabytes; it is never loaded whole). Hunk headers say how many lines each hunk
 * holds, so a removed line that reads "--- x" is counted, never taken for a file header.
 */

const CHUNK = 64 * 1024;
/** Enough of a line to read a hunk header's counts; the rest of a long line is skipped. */
const HEAD_MAX = 256;
const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

export interface PatchLines {
  readonly added: number;
  readonly removed: number;
}

/** A line-by-line counter over a patch's text. */
export class PatchLineCounter {
  added = 0;
  removed = 0;
  /** Lines left in the current hunk, old and new side. */
  private oldLeft = 0;
  private newLeft = 0;
  private head = '';
  private atStart = true;

  /** Feeds the next bytes of the patch. */
  push(buf: Buffer): void {
    let from = 0;
    while (from < buf.length) {
      const nl = buf.indexOf(0x0a, from);
      const end = nl === -1 ? buf.length : nl;
      if (this.head.length < HEAD_MAX)
        this.head += buf.toString('latin1', from, Math.min(end, from + HEAD_MAX - this.head.length));
      this.atStart = false;
      if (nl === -1) return;
      this.line(this.head);
      this.head = '';
      this.atStart = true;
      from = nl + 1;
    }
  }

  /** Ends the patch (a last line without a newline). */
  end(): PatchLines {
    if (!this.atStart) this.line(this.head);
    this.head = '';
    this.atStart = true;
    return { added: this.added, removed: this.removed };
  }

  private line(text: string): void {
    if (this.oldLeft > 0 || this.newLeft > 0) {
      const c = text[0];
      if (c === '+') {
        this.added++;
        this.newLeft--;
      } else if (c === '-') {
        this.removed++;
        this.oldLeft--;
      } else if (c === ' ' || text === '') {
        this.oldLeft--;
        this.newLeft--;
      } else if (c !== '\\') {
        // Not a hunk line: the header lied; read on as outside a hunk.
        this.oldLeft = 0;
        this.newLeft = 0;
        this.header(text);
      }
      return;
    }
    this.header(text);
  }

  private header(text: string): void {
    const m = HUNK.exec(text);
    if (!m) return;
    this.oldLeft = m[1] === undefined ? 1 : Number(m[1]);
    this.newLeft = m[2] === undefined ? 1 : Number(m[2]);
  }
}

/** Lines added and removed in the patch `file`; null when there is no such file. */
export function countPatchLines(file: string): PatchLines | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw fsError(error, 'read', file);
  }
  try {
    const counter = new PatchLineCounter();
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      counter.push(buf.subarray(0, n));
    }
    return counter.end();
  } catch (error) {
    throw fsError(error, 'read', file);
  } finally {
    fs.closeSync(fd);
  }
}
