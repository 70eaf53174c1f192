import type net from 'node:net';
import type { CommandContext, Io, RunCommand } from '../context.js';
import { onBehalfOf } from '../process/owner.js';
import { LINEAGE_VAR, newLineage } from '../process/reap.js';
import { invokedCommand } from '../util/argv.js';
import { isCi } from '../util/ci.js';
import { terminalText } from '../util/terminal-text.js';
import { admit, type ServeLog } from './admit.js';
import {
  encode,
  lineReader,
  parseClientMessage,
  type ServeRequest,
  SIGNAL_BY,
  SIGNAL_CODE,
  textMessages,
} from './protocol.js';

/*
 * One command a resident agentbox runs for a client (src/commands/serve.ts): its request read, checked,
 * and run in this process as that client would have run it — its directory, its environment, its
 * terminal's answers — its output and exit code sent back, the client's signals given to the
 * command as main.ts gives this process's.
 */

const CLIENT_GONE = 'its agentbox process ending (the resident agentbox lost it)';
/** A client that sends no request in this long is dropped. */
const REQUEST_WAIT_MS = 10_000;

/** What a connection needs of its server. */
export interface ServerSide {
  readonly runCommand: RunCommand;
  readonly log: ServeLog;
  /** Subscribes to the server's stop: a command then stops cleanly; a client yet to ask is let go. */
  readonly onStop: (stop: (by: string) => void) => () => void;
  /** Stops the server (a stop request); how many commands it runs, not counting `asking` connections. */
  readonly stopServer: (by: string, asking?: number) => number;
}

/** Serves one connection to its end. */
export function serveConnection(socket: net.Socket, server: ServerSide): Promise<void> {
  const { log } = server;
  return new Promise((resolve) => {
    const read = lineReader();
    let session: Session | undefined;
    /** Refused or handed back: nothing more is read from this client. */
    let answered = false;
    const timer = setTimeout(() => socket.destroy(), REQUEST_WAIT_MS);
    // The server stopping: a command stops cleanly; a client still to ask is let go.
    const unsubscribe = server.onStop((by) => {
      if (session) session.interrupt(by);
      else if (!answered) socket.destroy();
    });
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      session?.gone();
      if (session) return;
      unsubscribe();
      resolve();
    });
    socket.on('data', (chunk: string) => {
      if (answered) return;
      let values: unknown[];
      try {
        values = read(chunk);
      } catch (error) {
        log(`refused a client: ${(error as Error).message}`);
        answered = true;
        socket.destroy();
        return;
      }
      for (const value of values) {
        if (session) {
          session.message(value);
          continue;
        }
        clearTimeout(timer);
        // Answered unless admitted (a stop request's answer is still to be written when it stops the
        // server: its connection is not let go with the rest).
        answered = true;
        const request = admit(value, log, (by) => server.stopServer(by, 1));
        if (typeof request === 'string') {
          socket.end(request);
          return;
        }
        answered = false;
        session = new Session(socket, request, log);
        take(session, server, () => {
          unsubscribe();
          resolve();
        });
      }
    });
  });
}

/**
 * Runs an admitted command, `done` after. A client that gave up before its command was taken (this
 * server was stopped, then continued): its request and its end are read together; nothing of it
 * runs.
 */
function take(session: Session, server: ServerSide, done: () => void): void {
  void session.go().then((go) => {
    if (go) return void session.run(server.runCommand).finally(done);
    server.log(`a client (pid ${session.request.pid}) left before its command was taken: not run`);
    done();
  });
}

/** One served command: its context, its interrupt handlers, its questions. */
class Session {
  private readonly handlers = new Set<(by: string) => void>();
  private interrupted = false;
  private pending: string | undefined;
  private closed = false;
  /** A command stopped cleanly by a signal still exits as the shell expects: 128 + the signal. */
  private signalCode: number | undefined;
  private readonly answers: ((answer: string) => void)[] = [];

  constructor(
    private readonly socket: net.Socket,
    readonly request: ServeRequest,
    private readonly log: ServeLog,
  ) {}

  private goAhead: ((go: boolean) => void) | undefined;

  /**
   * Says the command is taken (`serving`), and whether the client still wants it: its `go`, or
   * false when it went away first (it gave up on a server that was stopped, then continued).
   */
  go(): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.closed) return resolve(false);
      this.goAhead = resolve;
      this.send(encode({ serving: process.pid }));
    });
  }

  async run(runCommand: RunCommand): Promise<void> {
    const { request } = this;
    const env = { ...request.env, [LINEAGE_VAR]: request.env[LINEAGE_VAR] || newLineage() };
    const ctx: CommandContext = {
      cwd: request.cwd,
      env,
      io: this.io(env),
      onInterrupt: (handler) => this.subscribe(handler),
    };
    const started = Date.now();
    const later: (() => Promise<unknown>)[] = [];
    let code: number;
    try {
      code = await onBehalfOf(
        request.pid,
        env,
        () => runCommand(request.argv, ctx),
        (work) => later.push(work),
      );
    } catch (error) {
      code = 70;
      this.send(textMessages('err', `agentbox: unexpected error in the resident agentbox: ${error}\n`));
    }
    const command = terminalText(invokedCommand(request.argv) ?? '');
    // The code the client exits with (130 for a run stopped by Ctrl-C), not the command's own.
    const exit = this.signalCode ?? code;
    this.log(
      `${command} for pid ${request.pid} in ${terminalText(request.cwd)}: exit ${exit} (${Date.now() - started} ms)`,
    );
    if (!this.closed) await this.end(encode({ exit }));
    // The command's cleanup after its answer (a run's release), before the server may stop; in the
    // command's context still (its owner's pid and environment).
    await onBehalfOf(request.pid, env, () => Promise.allSettled(later.map((work) => work())));
  }

  /** The last message, written out before anything else runs (a run's cleanup is synchronous). */
  private end(lines: string): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end(lines, () => setImmediate(resolve));
    });
  }

  private io(env: Record<string, string>): Io {
    const { tty, columns } = this.request;
    const isTTY = tty.out && !isCi(env);
    const socket = this.socket;
    return {
      isTTY,
      color: isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb',
      ...(isTTY && columns ? { columns } : {}),
      out: (text) => this.send(textMessages('out', text)),
      err: (text) => this.send(textMessages('err', text)),
      drained: () =>
        socket.writableNeedDrain
          ? new Promise<void>((resolve) => socket.once('drain', () => resolve()))
          : null,
      ...(isTTY && tty.in
        ? {
            ask: (question: string) =>
              new Promise<string>((resolve) => {
                this.answers.push(resolve);
                this.send(encode({ ask: question }));
              }),
          }
        : {}),
    };
  }

  private send(lines: string): void {
    if (!this.closed && lines) this.socket.write(lines);
  }

  private subscribe(handler: (by: string) => void): () => void {
    this.handlers.add(handler);
    if (this.pending !== undefined) {
      const by = this.pending;
      this.pending = undefined;
      this.interrupted = true;
      setImmediate(() => handler(by));
    }
    return () => this.handlers.delete(handler);
  }

  /** A signal the client caught, or the server stopping: as main.ts treats this process's. */
  interrupt(by: string, code?: number): void {
    if (this.handlers.size === 0 || this.interrupted) {
      // Nothing to stop cleanly yet (or a second signal): the client gets its exit at once; the
      // command, once it can be stopped, is.
      if (this.handlers.size === 0 && !this.interrupted) this.pending = by;
      if (code !== undefined && !this.closed) {
        this.closed = true;
        this.socket.end(encode({ exit: code }));
      }
      return;
    }
    this.interrupted = true;
    this.signalCode = code;
    for (const handler of this.handlers) handler(by);
  }

  /** The client went away: the command stops as when its terminal closes. */
  gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.goAhead?.(false);
    this.goAhead = undefined;
    for (const resolve of this.answers.splice(0)) resolve('');
    this.interrupt(CLIENT_GONE);
  }

  message(value: unknown): void {
    const message = parseClientMessage(value);
    if (!message) return;
    if ('go' in message) {
      this.goAhead?.(true);
      this.goAhead = undefined;
    } else if ('answer' in message) this.answers.shift()?.(message.answer);
    else this.interrupt(SIGNAL_BY[message.signal], SIGNAL_CODE[message.signal]);
  }
}
