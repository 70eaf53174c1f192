import fs from 'node:fs';

/*
 * Output written to a file descriptor the way process.stdout would, without making process.stdout.
 * For a pipe, node makes a net.Socket and loads its whole stream stack on first use: ~4 ms of every
 * short command (`agentbox status | …`, bench/status.bench.ts). Only for a pipe or a file: a
 * terminal goes through its stream as before.
 *
 * A direct write blocks while a pipe is full: a short command can afford that, a long-lived one
 * cannot (its hook endpoint must keep answering while nobody reads), so `toStream()` hands every
 * later write to the stream, as does a descriptor someone else made non-blocking (EAGAIN).
 */

export interface FdWriter {
  write(text: string): void;
  /** Whether writes still go to the descriptor itself (a pipe or a file, until toStream()). */
  readonly direct: boolean;
  /** From now on through the stream (which never blocks the event loop). */
  toStream(): void;
  /**
   * When the stream holds more than its high-water mark, a promise of its drain; else null. A
   * writer of long output awaits it so that nothing piles up in memory while a slow reader reads
   * (a socket, as node makes a child's stdio, is no pipe: writes to it go through the stream).
   */
  drained(): Promise<void> | null;
}

/** Whether `fd` is a pipe or a regular file: the outputs a direct write serves. */
export function isPipeOrFile(fd: number): boolean {
  try {
    const stat = fs.fstatSync(fd);
    return stat.isFIFO() || stat.isFile();
  } catch {
    return false;
  }
}

/**
 * Writes to `fd` directly when it is a pipe or a file, until toStream(); else, and then, to
 * `stream()`. `onGone`: the reader went away (EPIPE), called once; what is left is dropped.
 */
export function fdWriter(
  fd: number | undefined,
  stream: () => NodeJS.WritableStream,
  onGone: () => void = () => {},
): FdWriter {
  let streamed = fd === undefined || !isPipeOrFile(fd);
  let gone = false;
  const lost = () => {
    if (gone) return;
    gone = true;
    onGone();
  };
  let opened: NodeJS.WritableStream | undefined;
  const target = () => {
    if (!opened) {
      opened = stream();
      opened.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
        lost();
      });
    }
    return opened;
  };
  return {
    write(text) {
      if (gone) return;
      if (streamed) {
        target().write(text);
        return;
      }
      const bytes = Buffer.from(text);
      let at = 0;
      try {
        while (at < bytes.length) at += fs.writeSync(fd!, bytes, at);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') return lost();
        if (code !== 'EAGAIN') throw error;
        streamed = true;
        target().write(bytes.subarray(at));
      }
    },
    get direct() {
      return !streamed;
    },
    toStream() {
      streamed = true;
    },
    drained: () => (streamed && !gone && opened ? drainOf(opened) : null),
  };
}

/** A promise of the stream's drain when it holds more than its high-water mark, else null. */
function drainOf(stream: NodeJS.WritableStream & { writableNeedDrain?: boolean }): Promise<void> | null {
  if (!stream.writableNeedDrain) return null;
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
