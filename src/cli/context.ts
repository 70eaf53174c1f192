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
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface CommandContext {
  readonly cwd: string;
  readonly env: Env;
  readonly io: Io;
}

/** An Io that collects output in memory, for tests and for commands that run other commands. */
export function memoryIo(options: { isTTY?: boolean } = {}): Io & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    isTTY: options.isTTY ?? false,
    color: false,
    out(text: string) {
      io.stdout += text;
    },
    err(text: string) {
      io.stderr += text;
    },
  };
  return io;
}

export function processIo(stream: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }, env: Env): Io {
  const isTTY = Boolean(stream.stdout.isTTY);
  const color = isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  return {
    isTTY,
    color,
    out: (text) => void stream.stdout.write(text),
    err: (text) => void stream.stderr.write(text),
  };
}
