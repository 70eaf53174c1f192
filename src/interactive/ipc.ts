import fs from 'node:fs';
import net from 'node:net';
import { AgentboxError, errnoCode } from '../errors.js';

/**
 * A run's control socket: a Unix socket, mode 0600, one JSON object per line each way.
 * Request: `{"id":1,"method":"state","params":{}}`; answer: `{"id":1,"ok":true,"result":…}` or
 * `{"id":1,"ok":false,"error":"…"}`. Methods: inject {text}, restart {mode}, state, pid, stop {graceful}.
 */
export type IpcMethod = 'inject' | 'restart' | 'state' | 'pid' | 'stop';
export const IPC_METHODS: readonly IpcMethod[] = ['inject', 'restart', 'state', 'pid', 'stop'];

export type IpcHandler = (method: IpcMethod, params: Record<string, unknown>) => Promise<unknown> | unknown;

const MAX_LINE = 1024 * 1024;

export interface IpcServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Removes a socket file left by a supervisor that died: one nobody answers on. A live socket is
 * an error (another supervisor owns the run).
 */
export async function clearStaleSocket(socketPath: string): Promise<boolean> {
  if (!fs.existsSync(socketPath)) return false;
  const alive = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) {
    throw new AgentboxError('USAGE', `another agentbox supervisor is listening on ${socketPath}`, {
      hint: 'stop it first (agentbox stop <run>)',
    });
  }
  fs.rmSync(socketPath, { force: true });
  return true;
}

export async function startIpcServer(socketPath: string, handler: IpcHandler): Promise<IpcServer> {
  await clearStaleSocket(socketPath);
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE) {
        socket.end(`${JSON.stringify({ id: null, ok: false, error: 'request too large' })}\n`);
        return;
      }
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        void answer(socket, line, handler);
        newline = buffer.indexOf('\n');
      }
    });
    socket.on('error', () => {});
  });
  // NOTE: the socket file takes its mode from the umask at bind time, so a chmod after listen would
  // leave a moment in which others could connect: the umask is narrowed around the bind instead.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, () => resolve());
    } finally {
      process.umask(umask);
    }
  });
  fs.chmodSync(socketPath, 0o600);
  let closing: Promise<void> | undefined;
  return {
    path: socketPath,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        fs.rmSync(socketPath, { force: true });
      });
      return closing;
    },
  };
}

async function answer(socket: net.Socket, line: string, handler: IpcHandler): Promise<void> {
  let id: unknown = null;
  try {
    const request = JSON.parse(line) as { id?: unknown; method?: unknown; params?: unknown };
    id = request.id ?? null;
    if (!IPC_METHODS.includes(request.method as IpcMethod))
      throw new Error(`unknown method ${JSON.stringify(request.method)}`);
    const params =
      typeof request.params === 'object' && request.params !== null
        ? (request.params as Record<string, unknown>)
        : {};
    const result = await handler(request.method as IpcMethod, params);
    if (!socket.destroyed) socket.write(`${JSON.stringify({ id, ok: true, result: result ?? null })}\n`);
  } catch (error) {
    if (!socket.destroyed)
      socket.write(`${JSON.stringify({ id, ok: false, error: (error as Error).message })}\n`);
  }
}

/** One request to a run's socket; throws an AgentboxError a person can act on. */
export async function ipcRequest(
  socketPath: string,
  method: IpcMethod,
  params: Record<string, unknown> = {},
  timeoutMs = 10_000,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new AgentboxError('IO_FAILED', `no answer from ${socketPath} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify({ id: 1, method, params })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      socket.end();
      const reply = JSON.parse(buffer.slice(0, newline)) as { ok: boolean; result?: unknown; error?: string };
      if (reply.ok) resolve(reply.result);
      else reject(new AgentboxError('USAGE', `the run's supervisor refused ${method}: ${reply.error}`));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      const code = errnoCode(error);
      reject(
        new AgentboxError(
          'USAGE',
          `cannot reach the run's supervisor at ${socketPath} (${code ?? error.message})`,
          {
            hint:
              code === 'ENOENT' || code === 'ECONNREFUSED'
                ? 'the session is not running; start it with agentbox start'
                : undefined,
          },
        ),
      );
    });
  });
}
