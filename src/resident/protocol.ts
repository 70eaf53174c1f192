import type { Socket } from 'node:net';
import path from 'node:path';

/*
 * The resident agentbox (`agentbox serve`, docs/resident.md): one warm process of the person's that
 * runs the commands other agentbox processes hand it over a Unix socket, so a run does not pay node's
 * start and the command's modules each time. This is the wire between the two, and nothing else:
 * lines of JSON, one message a line.
 */

/** The commands a resident process runs: those that start or continue a run, in the foreground. */
export const SERVED_COMMANDS: ReadonlySet<string> = new Set(['scout', 'plan', 'review', 'fix', 'revise']);

/**
 * Served commands a client still runs itself: those that hand its terminal to another program (an
 * editor: `revise --edit`), and help.
 */
export function usesTerminal(argv: readonly string[]): boolean {
  return argv.some((arg) => arg === '--edit' || arg === '--help' || arg === '-h');
}

/** A line longer than this ends the connection: no message of the protocol comes near it. */
export const MAX_LINE = 8 * 1024 * 1024;

/** Text is sent in pieces of at most this many characters (a report printed whole). */
const PIECE = 256 * 1024;

/** What a client asks: run `argv` as if it were this process. */
export interface ServeRequest {
  readonly v: 1;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** The client's pid: the process that stands for the run (its stop, its liveness). */
  readonly pid: number;
  /** Which of the client's stdin, stdout and stderr are terminals. */
  readonly tty: { readonly in: boolean; readonly out: boolean; readonly err: boolean };
  readonly columns?: number;
  /** The client's umask: a run makes files as its own process would. */
  readonly umask: number;
  /** The client's mount and pid namespaces (`/proc/self/ns`), where it has them. */
  readonly ns?: string;
  /** The client's supplementary groups, sorted. */
  readonly groups?: readonly number[];
}

/** What `agentbox serve --stop` asks: that the server stop as on Ctrl-C. */
export interface StopRequest {
  readonly v: 1;
  readonly stop: true;
  readonly pid: number;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * From the resident process: that it took the command (its pid), output, a question, the exit code;
 * or `local`: run it yourself.
 */
export type ServerMessage =
  | { readonly local: string }
  | { readonly serving: number }
  | { readonly out: string }
  | { readonly err: string }
  | { readonly ask: string }
  /** The answer to a stop request: the server's pid, and how many commands it stops first. */
  | { readonly stopping: number; readonly running: number }
  | { readonly exit: number };

/**
 * From the client: that it still wants the command the server took (`go`, the answer to `serving`:
 * until then nothing runs), a signal it caught, an answer to a question.
 */
export type ClientMessage =
  | { readonly go: true }
  | { readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGUSR2' }
  | { readonly answer: string };

const SIGNALS = new Set(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR2']);

/** The exit code a signal gives a command, served or not (128 + the signal; agentbox stop's: 143). */
export const SIGNAL_CODE = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGUSR2: 143 } as const;
/** What a signal is called in what agentbox says of it. */
export const SIGNAL_BY = {
  SIGINT: 'Ctrl-C',
  SIGTERM: 'SIGTERM',
  SIGHUP: 'the terminal closing (SIGHUP)',
  SIGUSR2: 'agentbox stop',
} as const;

export function encode(message: ServeRequest | StopRequest | ServerMessage | ClientMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** `text` as `out`/`err` messages, each a line of bounded size. */
export function textMessages(stream: 'out' | 'err', text: string): string {
  let lines = '';
  for (let i = 0; i < text.length; i += PIECE) {
    lines += encode(stream === 'out' ? { out: text.slice(i, i + PIECE) } : { err: text.slice(i, i + PIECE) });
  }
  return lines;
}

/**
 * Splits a byte stream into messages: `push` each chunk, get the complete lines' values. A line past
 * MAX_LINE or one that is not JSON throws (the caller ends the connection).
 */
export function lineReader(): (chunk: string) => unknown[] {
  let pending = '';
  return (chunk) => {
    pending += chunk;
    const values: unknown[] = [];
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim() !== '') values.push(JSON.parse(line));
    }
    if (pending.length > MAX_LINE) throw new Error(`a line of more than ${MAX_LINE} characters`);
    return values;
  };
}

const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((v) => typeof v === 'string');

/** `value` as a request, or why it is none. */
export function parseRequest(value: unknown): ServeRequest | string {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const r = value as Record<string, unknown>;
  if (r.v !== 1) return `protocol version ${JSON.stringify(r.v)} (this one speaks 1)`;
  if (!Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string'))
    return 'argv is not a list of strings';
  if (typeof r.cwd !== 'string' || !path.isAbsolute(r.cwd)) return 'cwd is not an absolute path';
  if (!isStringRecord(r.env)) return 'env is not a map of strings';
  if (!Number.isSafeInteger(r.pid) || (r.pid as number) <= 1) return 'pid is not a process id';
  const tty = r.tty as Record<string, unknown> | undefined;
  if (!tty || typeof tty.in !== 'boolean' || typeof tty.out !== 'boolean' || typeof tty.err !== 'boolean')
    return 'tty is not three booleans';
  if (r.columns !== undefined && (!Number.isSafeInteger(r.columns) || (r.columns as number) < 1))
    return 'columns is not a positive number';
  if (!Number.isSafeInteger(r.umask) || (r.umask as number) < 0 || (r.umask as number) > 0o777)
    return 'umask is not a file mode mask';
  if (r.ns !== undefined && typeof r.ns !== 'string') return 'ns is not a string';
  if (r.groups !== undefined && (!Array.isArray(r.groups) || !r.groups.every((g) => Number.isSafeInteger(g))))
    return 'groups is not a list of group ids';
  return value as ServeRequest;
}

/** `value` as a stop request, or null when it is none. */
export function parseStopRequest(value: unknown): StopRequest | null {
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  if (r.v !== 1 || r.stop !== true || !Number.isSafeInteger(r.pid) || (r.pid as number) <= 1) return null;
  return isStringRecord(r.env) ? (value as StopRequest) : null;
}

/**
 * The environment variables holding a path agentbox itself reads: a relative one names a place in
 * the client's folder (as it does for an agentbox that runs its command itself), never the server's.
 */
const PATH_VARS = [
  'AGENTBOX_CONFIG',
  'XDG_CONFIG_HOME',
  'XDG_STATE_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'CLAUDE_CONFIG_DIR',
  'TMPDIR',
] as const;

/** `env` with its relative PATH_VARS resolved against `cwd`, the client's folder. Pure. */
export function absolutePaths(env: Readonly<Record<string, string>>, cwd: string): Record<string, string> {
  const out = { ...env };
  for (const name of PATH_VARS) {
    const value = env[name];
    if (value && !path.isAbsolute(value)) out[name] = path.resolve(cwd, value);
  }
  return out;
}

/** This process's mount and pid namespaces, as a request carries them; undefined without /proc. */
export function ownNamespaces(readlink: (file: string) => string): string | undefined {
  try {
    return `${readlink('/proc/self/ns/mnt')} ${readlink('/proc/self/ns/pid')}`;
  } catch {
    return undefined;
  }
}

/** `value` as a client's message, or null. */
export function parseClientMessage(value: unknown): ClientMessage | null {
  if (typeof value !== 'object' || value === null) return null;
  const m = value as Record<string, unknown>;
  if (m.go === true) return { go: true };
  if (typeof m.signal === 'string' && SIGNALS.has(m.signal)) return { signal: m.signal as 'SIGINT' };
  if (typeof m.answer === 'string') return { answer: m.answer };
  return null;
}

/**
 * Reads a server's messages from `socket` (set to UTF-8 here), each to `each` in order; `each`
 * returning true is the last one wanted. A line that is not a message ends the connection.
 */
export function onServerMessages(
  socket: Socket,
  each: (message: ServerMessage) => boolean | undefined,
): void {
  const read = lineReader();
  let done = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    if (done) return;
    let values: unknown[];
    try {
      values = read(chunk);
    } catch {
      socket.destroy();
      return;
    }
    for (const value of values) {
      const message = parseServerMessage(value);
      if (message && each(message)) {
        done = true;
        return;
      }
    }
  });
}

/** `value` as a server's message, or null. */
export function parseServerMessage(value: unknown): ServerMessage | null {
  if (typeof value !== 'object' || value === null) return null;
  const m = value as Record<string, unknown>;
  if (typeof m.local === 'string') return { local: m.local };
  if (Number.isSafeInteger(m.serving)) return { serving: m.serving as number };
  if (typeof m.out === 'string') return { out: m.out };
  if (typeof m.err === 'string') return { err: m.err };
  if (typeof m.ask === 'string') return { ask: m.ask };
  if (Number.isSafeInteger(m.stopping) && Number.isSafeInteger(m.running))
    return { stopping: m.stopping as number, running: m.running as number };
  if (Number.isSafeInteger(m.exit)) return { exit: m.exit as number };
  return null;
}

/**
 * The folder of the resident sockets, in agentbox's state folder (which every run's sandbox denies):
 * the person's alone (0700), checked by both ends.
 */
export function residentDir(stateDir: string): string {
  return path.join(stateDir, 'resident');
}

/**
 * One socket per build of agentbox: the package's folder, its version and when its bundle was built.
 * A client of another install, or of this one after an upgrade, finds no server and runs itself.
 */
export function socketName(packageRoot: string, version: string, builtAt: number): string {
  const text = `${packageRoot}\0${version}\0${builtAt}`;
  // FNV-1a, twice with different seeds: a name, not a secret (node:crypto would cost the client ~2 ms).
  const fnv = (seed: number) => {
    let h = seed;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    return h.toString(16).padStart(8, '0');
  };
  return `${fnv(0x811c9dc5)}${fnv(0x050c5d1f)}.sock`;
}

/** The longest path a Unix socket may have on Linux (sun_path, 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;
