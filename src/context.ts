import { askOn } from './util/ask.js';
import { isCi } from './util/ci.js';
import type { Env } from './util/env.js';
import { fdWriter } from './util/fd-writer.js';
/**
 * What every command receives instead of reading process globals: the directory it runs in, the
 * environment, and where to write. Tests build one in-process; the CLI builds the real one.
 */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal: live lines and confirmation prompts are allowed. */
  readonly isTTY: boolean;
  readonly color: boolean;
  /** The terminal's width in columns, when stdout is one. */
  readonly columns?: number;
  /**
   * A promise to await before writing more when output is backed up (a slow reader of a socket);
   * null when it is not. Absent: writes never back up (tests' memory Io).
   */
  readonly drained?: () => Promise<void> | null;
  /** Asks a person and returns the answer; absent when nobody can answer (stdin is not a terminal). */
  readonly ask?: (question: string) => Promise<string>;
}

export type { Env };

/** Subscribes to Ctrl-C / SIGTERM; returns the unsubscribe. Absent: the command cannot be interrupted gracefully. */
export type OnInterrupt = (handler: (by: string) => void) => () => void;

/** The person's terminal, for commands that hand it over to a child (agentbox start). */
export interface Terminal {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly isTTY: boolean;
  size(): { cols: number; rows: number };
  setRawMode(on: boolean): void;
  /** Calls `handler` when the window is resized; returns the unsubscribe. */
  onResize(handler: () => void): () => void;
}

/** The CLI itself: runs `argv` as a command of its own, in `ctx`, and returns the exit code. */
export type RunCommand = (argv: readonly string[], ctx: CommandContext) => Promise<number>;

export interface CommandContext {
  readonly cwd: string;
  readonly env: Env;
  readonly io: Io;
  readonly onInterrupt?: OnInterrupt;
  readonly terminal?: Terminal;
  /** The CLI, for a command that runs others (`agentbox serve`); set by the process's entry. */
  readonly runCommand?: RunCommand;
}

export function processTerminal(
  stream: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream },
  env: Env = {},
): Terminal {
  // In CI nobody sits at the pseudo-terminal a runner may attach: no session is handed one.
  // NOTE: all of it on first use: node makes process.stdin and process.stdout when first read
  // (~2-4 ms each, fs or net streams), which a command that hands over no terminal should not pay.
  let tty: boolean | undefined;
  const isTTY = () => {
    tty ??= !isCi(env) && Boolean(stream.stdout.isTTY && stream.stdin.isTTY);
    return tty;
  };
  return {
    get input() {
      return stream.stdin;
    },
    get output() {
      return stream.stdout;
    },
    get isTTY() {
      return isTTY();
    },
    size: () => ({ cols: stream.stdout.columns || 80, rows: stream.stdout.rows || 24 }),
    setRawMode: (on) => {
      if (isTTY()) stream.stdin.setRawMode(on);
    },
    onResize: (handler) => {
      process.on('SIGWINCH', handler);
      return () => process.off('SIGWINCH', handler);
    },
  };
}

/** An Io that collects output in memory, for tests and for commands that run other commands. */
export function memoryIo(
  options: { isTTY?: boolean; answers?: string[] } = {},
): Io & { stdout: string; stderr: string } {
  const answers = options.answers;
  const io = {
    stdout: '',
    stderr: '',
    isTTY: options.isTTY ?? false,
    color: false,
    ...(answers
      ? {
          ask: async (question: string) => {
            io.stdout += question;
            return answers.shift() ?? '';
          },
        }
      : {}),
    out(text: string) {
      io.stdout += text;
    },
    err(text: string) {
      io.stderr += text;
    },
  };
  return io;
}

export interface ProcessIoOptions {
  /** stdout's descriptor: written to directly when it is a pipe or a file (src/util/fd-writer.ts). */
  readonly outFd?: number;
  /** stderr's, likewise. */
  readonly errFd?: number;
  /** The reader of stdout went away (EPIPE); what is left to print is dropped. */
  readonly onReaderGone?: () => void;
}

/** The process's Io; `longLived()`: the command will run a while (output stops blocking, see fd-writer). */
export function processIo(
  stream: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream },
  env: Env,
  options: ProcessIoOptions = {},
): Io & { longLived(): void } {
  // A pipe or a file is no terminal: process.stdout is not made at all (NOTE: ~4 ms for a pipe).
  const writer = fdWriter(options.outFd, () => stream.stdout, options.onReaderGone);
  const errWriter = fdWriter(options.errFd, () => stream.stderr);
  // In CI (see src/util/ci.ts) output is a log: plain lines, no colour, no live line, no prompt.
  const isTTY = !writer.direct && !isCi(env) && Boolean(stream.stdout.isTTY);
  const color = isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  const ask = (question: string) => askOn(stream.stdin, stream.stdout, question);
  return {
    isTTY,
    color,
    ...(isTTY && stream.stdout.columns ? { columns: stream.stdout.columns } : {}),
    out: (text) => writer.write(text),
    err: (text) => errWriter.write(text),
    drained: () => writer.drained(),
    // (isTTY first: process.stdin is made on first use, see processTerminal)
    ...(isTTY && stream.stdin.isTTY ? { ask } : {}),
    longLived: () => {
      writer.toStream();
      errWriter.toStream();
    },
  };
}
