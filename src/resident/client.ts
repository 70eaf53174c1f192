import fs from 'node:fs';
import net from 'node:net';
import tty from 'node:tty';
import { insideRun, procReader } from '../airlock/inside.js';
import { invokedCommand } from '../util/argv.js';
import { askOn } from '../util/ask.js';
import { fdWriter } from '../util/fd-writer.js';
import { VERSION } from '../version.js';
import { residentSetting, startedNotice, startInBackground, startsResident } from './autostart.js';
import { privateDirProblem, socketPath } from './place.js';
import {
  absolutePaths,
  type ClientMessage,
  encode,
  onServerMessages,
  ownNamespaces,
  SERVED_COMMANDS,
  type ServerMessage,
  SIGNAL_BY,
  SIGNAL_CODE,
  usesTerminal,
} from './protocol.js';

/*
 * The client's side of the resident agentbox (src/commands/serve.ts), loaded by bin/agentbox.cjs for
 * the commands a resident process runs, before the rest of agentbox: it finds this build's socket,
 * hands the command over and relays its output, questions, signals and exit code. No server, or a
 * place that is not the person's alone: null, and this process runs the command itself.
 */

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR2'] as const;
const CUT_SHORT =
  'exiting at once; the resident agentbox goes on stopping the command cleanly: agentbox status shows it';
/** How long the client waits for its server to take the command before it says it waits. */
const TAKEN_NOTICE_MS = 3_000;
/** What the client says when its server has not taken the command in TAKEN_NOTICE_MS. */
const notTaken = (file: string) =>
  `agentbox: the resident agentbox has not taken the command after ${TAKEN_NOTICE_MS / 1000}s (stopped with Ctrl-Z or SIGSTOP? its log: ${file.replace(/\.sock$/, '.log')}); waiting\n` +
  '  → Ctrl-C gives up, with nothing run; AGENTBOX_RESIDENT=0 runs a command without it\n';
/** What the client says when its server went away mid-command (`file`: the server's socket). */
const lost = (file: string) =>
  `agentbox: the resident agentbox ended before the command did (see its terminal, or its log ${file.replace(/\.sock$/, '.log')})\n` +
  '  → agentbox status shows the run; agentbox recover takes up one left ACTIVE\n';

/**
 * Whether this command looked for a resident agentbox and none answered (one may be started), and
 * the socket it found then, if any (a dead server's): another command may start one meanwhile.
 */
let noneAnswered = false;
let seen: { file: string; ino: number | null } | null = null;

/** The socket to hand `argv` to, or null: run it here. */
function residentSocket(argv: readonly string[], env: NodeJS.ProcessEnv, packageRoot: string): string | null {
  if (residentSetting(env) === 'off') return null;
  const command = invokedCommand(argv);
  if (!command || !SERVED_COMMANDS.has(command) || usesTerminal(argv)) return null;
  // From inside a run or a Claude Code session the server takes nothing (it would run outside
  // that box): the command runs here, in the caller's own box, as it does with no server.
  if (insideRun(env, process.pid, procReader)) return null;
  const place = socketPath(env, packageRoot, VERSION);
  if (!place) return null;
  if (privateDirProblem(place.dir) !== null) {
    // (a state folder that is not the person's alone: no server used; one started would refuse it)
    noneAnswered = true;
    return null;
  }
  seen = { file: place.file, ino: null };
  try {
    const stat = fs.lstatSync(place.file);
    seen.ino = stat.ino;
    if (stat.isSocket() && stat.uid === process.getuid?.()) return place.file;
  } catch {
    // (no socket: no server)
  }
  noneAnswered = true;
  return null;
}

/** Whether another socket is at the place this command found none, or a dead one: started meanwhile. */
function startedMeanwhile(): boolean {
  if (!seen) return false;
  try {
    return fs.lstatSync(seen.file).ino !== seen.ino;
  } catch {
    return false;
  }
}

/**
 * After `tryResident` found no resident agentbox: starts one in the background as this process
 * exits, when the person wants it (src/resident/autostart.ts), and says so on stderr. Not after a
 * usage error or a command ended by a signal.
 */
export function startResidentOnExit(packageRoot: string): void {
  if (!noneAnswered || !startsResident(process.env, { in: tty.isatty(0), err: tty.isatty(2) })) return;
  process.once('exit', (code) => {
    // (three commands that exit together start one server, not three that each say so)
    if (code === 2 || code >= 128 || startedMeanwhile()) return;
    try {
      const started = startInBackground(packageRoot, process.env);
      if (started) fs.writeSync(2, startedNotice(started.pid, started.idle, process.env));
    } catch {
      // Not started: the next command runs itself, as this one did.
    }
  });
}

/**
 * Runs `argv` in the resident agentbox; its exit code, or null when there is none to run it (or it
 * handed the command back).
 */
export function tryResident(packageRoot: string, argv: readonly string[]): Promise<number | null> {
  const file = residentSocket(argv, process.env, packageRoot);
  if (!file) return Promise.resolve(null);
  let request: string;
  try {
    request = requestLine(argv);
  } catch {
    // (a working folder that was removed: this process says so itself)
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const socket = net.connect(file);
    let connected = false;
    socket.once('error', () => {
      if (connected) return;
      // (a socket a server left when it was killed: nobody answers)
      noneAnswered = true;
      resolve(null);
    });
    socket.once('connect', () => {
      connected = true;
      relay(socket, request, file).then(resolve, () => resolve(1));
    });
  });
}

/** What the server is asked: run `argv` as this process would. */
function requestLine(argv: readonly string[]): string {
  const isTTY = { in: tty.isatty(0), out: tty.isatty(1), err: tty.isatty(2) };
  const cwd = process.cwd();
  return encode({
    v: 1,
    argv,
    cwd,
    env: absolutePaths(process.env as Record<string, string>, cwd),
    pid: process.pid,
    tty: isTTY,
    umask: process.umask(),
    ...namespacesAndGroups(),
    ...(isTTY.out && process.stdout.columns ? { columns: process.stdout.columns } : {}),
  });
}

/** What a served run inherits from its process besides the umask: its namespaces and groups. */
function namespacesAndGroups(): { ns?: string; groups?: number[] } {
  const ns = ownNamespaces(fs.readlinkSync);
  const groups = process.getgroups?.().sort((a, b) => a - b);
  return { ...(ns ? { ns } : {}), ...(groups ? { groups } : {}) };
}

function relay(socket: net.Socket, request: string, file: string): Promise<number | null> {
  const send = (message: ClientMessage) => {
    if (!socket.destroyed) socket.write(encode(message));
  };
  const out = fdWriter(
    1,
    () => process.stdout,
    () => send({ signal: 'SIGHUP' }),
  );
  const err = fdWriter(2, () => process.stderr);
  socket.write(request);
  return new Promise((resolve) => {
    let code: number | null | undefined;
    /** Whether the server took the command (it said so, or said anything). */
    let taken = false;
    const quit = (exit: number, text: string) => {
      err.write(text);
      code = exit;
      socket.destroy();
    };
    const slow = setTimeout(() => {
      if (!taken) err.write(notTaken(file));
    }, TAKEN_NOTICE_MS);
    const forward = signalForwarder({
      over: () => code !== undefined,
      taken: () => taken,
      quit,
      send: (signal) => send({ signal }),
    });
    const handlers = SIGNALS.map((signal) => [signal, forward(signal)] as const);
    for (const [signal, handler] of handlers) process.on(signal, handler);
    onServerMessages(socket, (message) => {
      // Taken: the command runs once the client says so (a client that gave up meanwhile does not).
      if ('serving' in message && !taken) send({ go: true });
      taken = true;
      const ended = handle(message, out.write, err.write, send);
      if (ended === undefined) return false;
      // The last message: done, without waiting for the server to close its end (it may have a
      // run's cleanup to do first).
      code = ended;
      socket.destroy();
      return true;
    });
    socket.once('close', () => {
      clearTimeout(slow);
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
      if (code === undefined) err.write(lost(file));
      resolve(code === undefined ? 1 : code);
    });
  });
}

/**
 * What a signal the client catches does. The first goes to the command, which stops cleanly; a
 * second ends this client at once, as it ends an agentbox that runs its command itself. Before the
 * server took the command there is nothing to stop: the first ends it, with nothing run (a stopped
 * server, continued, finds its client gone and runs nothing of it).
 */
function signalForwarder(c: {
  readonly over: () => boolean;
  readonly taken: () => boolean;
  readonly quit: (exit: number, text: string) => void;
  readonly send: (signal: (typeof SIGNALS)[number]) => void;
}) {
  let forwarded = false;
  return (signal: (typeof SIGNALS)[number]) => () => {
    if (c.over()) return;
    const by = SIGNAL_BY[signal];
    if (!c.taken())
      return c.quit(
        SIGNAL_CODE[signal],
        `\nagentbox: ${by} before the resident agentbox took the command: nothing was run\n`,
      );
    if (forwarded) return c.quit(SIGNAL_CODE[signal], `\nagentbox: ${by} again: ${CUT_SHORT}\n`);
    forwarded = true;
    c.send(signal);
  };
}

/** One message from the server; its exit code when it is the last (null: run the command here). */
function handle(
  message: ServerMessage,
  out: (text: string) => void,
  err: (text: string) => void,
  send: (message: ClientMessage) => void,
): number | null | undefined {
  if ('local' in message) return null;
  if ('serving' in message) return undefined;
  if ('out' in message) out(message.out);
  else if ('err' in message) err(message.err);
  else if ('stopping' in message) return undefined;
  else if ('ask' in message)
    void askOn(process.stdin, process.stdout, message.ask).then((answer) => send({ answer }));
  else return message.exit;
  return undefined;
}
