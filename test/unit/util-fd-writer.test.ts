import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fdWriter, isPipeOrFile } from '../../src/util/fd-writer.js';
import { tempDir } from '../helpers/git-repo.js';

/*
 * src/util/fd-writer.ts on real descriptors: a file, and a named pipe (mkfifo) whose reader reads
 * nothing, closes, or was made non-blocking.
 */

/** A stream that records what reaches it, and how often it was asked for. */
function recordingStream() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => {
    text += d;
  });
  let made = 0;
  return {
    stream: () => {
      made++;
      return stream;
    },
    text: () => text,
    made: () => made,
  };
}

function fifo(): string {
  const file = path.join(tempDir(), 'out.fifo');
  execFileSync('mkfifo', [file]);
  return file;
}

describe('fdWriter', () => {
  it('writes to a file directly, whole and in order, without making the stream', () => {
    const file = path.join(tempDir(), 'out.txt');
    const fd = fs.openSync(file, 'w');
    const rec = recordingStream();
    const writer = fdWriter(fd, rec.stream, () => {});
    const text = `Révise la façade — 日本語 🚀\n${'x'.repeat(200_000)}\n`;
    writer.write(text);
    writer.write('the end\n');
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${text}the end\n`);
    expect(rec.made()).toBe(0);
    expect(isPipeOrFile(fd)).toBe(false);
    const again = fs.openSync(file, 'r');
    expect(isPipeOrFile(again)).toBe(true);
    fs.closeSync(again);
  });

  it('a pipe someone made non-blocking: what does not fit goes to the stream, nothing lost, in order', async () => {
    const pipe = fifo();
    const reader = fs.openSync(pipe, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const fd = fs.openSync(pipe, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    expect(isPipeOrFile(fd)).toBe(true);
    const rec = recordingStream();
    const writer = fdWriter(fd, rec.stream, () => {});
    const text = Array.from({ length: 40_000 }, (_, i) => `line ${i}\n`).join('');
    writer.write(text);
    writer.write('after\n');
    await new Promise((resolve) => setImmediate(resolve));
    const chunk = Buffer.alloc(1 << 20);
    const got = chunk.subarray(0, fs.readSync(reader, chunk)).toString();
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(text.length);
    expect(rec.made()).toBe(1);
    expect(got + rec.text()).toBe(`${text}after\n`);
    fs.closeSync(fd);
    fs.closeSync(reader);
  });

  it('a reader that went away: told once, no throw, the rest dropped', () => {
    const pipe = fifo();
    const reader = fs.openSync(pipe, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const fd = fs.openSync(pipe, fs.constants.O_WRONLY);
    fs.closeSync(reader);
    const rec = recordingStream();
    let gone = 0;
    const writer = fdWriter(fd, rec.stream, () => gone++);
    writer.write('nobody reads this\n');
    writer.write('nor this\n');
    expect(gone).toBe(1);
    expect(rec.made()).toBe(0);
    fs.closeSync(fd);
  });

  it('after toStream(), every write goes to the stream (a long-lived command never blocks)', () => {
    const file = path.join(tempDir(), 'out.txt');
    const fd = fs.openSync(file, 'w');
    const rec = recordingStream();
    const writer = fdWriter(fd, rec.stream, () => {});
    writer.write('direct\n');
    writer.toStream();
    writer.write('streamed\n');
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).toBe('direct\n');
    expect(rec.text()).toBe('streamed\n');
  });

  it('a terminal or a missing descriptor is not written to directly', () => {
    const devNull = fs.openSync('/dev/null', 'w');
    expect(isPipeOrFile(devNull)).toBe(false);
    const rec = recordingStream();
    const writer = fdWriter(devNull, rec.stream);
    expect(writer.direct).toBe(false);
    writer.write('to the stream\n');
    expect(rec.text()).toBe('to the stream\n');
    expect(fdWriter(undefined, rec.stream).direct).toBe(false);
    fs.closeSync(devNull);
    expect(isPipeOrFile(987_654)).toBe(false);
  });
});
