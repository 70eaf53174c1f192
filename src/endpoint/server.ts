import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { listenLocal } from './listen.js';
import { type NetworkRefusal, PROXY_REFUSAL, printable, startSocksRefuser } from './refuse-network.js';

/** Claude Code's hook payload: always an object with `hook_event_name`; the rest depends on the event. */
export type HookInput = Record<string, unknown> & { hook_event_name?: string };
/** What a hook answers (for example `{"decision":"block","reason":…}`); `{}` means "no opinion". */
export type HookAnswer = Record<string, unknown>;
export type HookHandler = (
  event: string,
  input: HookInput,
) => Promise<HookAnswer | undefined> | HookAnswer | undefined;

export interface EndpointOptions {
  readonly handler: HookHandler;
  /** Requests whose body is larger get 413 (default 8 MiB: PostToolUse carries whole tool outputs). */
  readonly maxBodyBytes?: number;
  /** Called for every refused or failed request, with a short reason; never throws into the server. */
  readonly onProblem?: (problem: { status: number; reason: string; path: string }) => void;
  /**
   * Serve as the run's sandbox proxy too (src/endpoint/refuse-network.ts): the hook calls Claude
   * Code sends through it reach the endpoint, every other request (HTTP, CONNECT, SOCKS) is refused
   * and reported here. Absent: no SOCKS port, and a request for another host still gets a refusal.
   */
  readonly onNetworkRefused?: (refusal: NetworkRefusal) => void;
  /**
   * Connections held at once; past it they are dropped (and reported with onNetworkRefused). High:
   * hooks come in bursts (a thousand at once, test/unit/supervisor-burst.test.ts), and a refused
   * hook call fails closed for the guard's PreToolUse (src/endpoint/settings.ts); it bounds an
   * agent that floods the port through the sandbox's proxy bridge.
   */
  readonly maxConnections?: number;
}

export interface Endpoint {
  readonly url: string;
  readonly port: number;
  /** The per-run secret; hooks send it as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The ports Claude Code's sandbox sends its commands' traffic to (with onNetworkRefused). */
  readonly proxy?: { readonly httpPort: number; readonly socksPort: number };
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The run's hook endpoint: HTTP on 127.0.0.1 only, a free port, a random secret. Every failure
 * mode (no secret, huge body, bad JSON, a handler that throws) is answered with a status and
 * never stops the server, so one bad request cannot break the run it serves.
 */
export async function startEndpoint(options: EndpointOptions): Promise<Endpoint> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const limit = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const problem = (res: http.ServerResponse, status: number, reason: string, path: string) => {
    options.onProblem?.({ status, reason, path });
    if (!res.headersSent) res.writeHead(status, JSON_HEADERS);
    res.end(JSON.stringify({ error: reason }));
  };

  let origin = '';
  const server = http.createServer((req, res) => {
    const path = originForm(req.url ?? '/', origin);
    if (path === null) {
      req.resume();
      refuseRequest(req.url ?? '', res, options.onNetworkRefused);
      return;
    }
    const match = /^\/hook\/([A-Za-z]+)$/.exec(path);
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== expected.length || !timingSafeEqual(auth, expected)) {
      req.resume();
      return problem(res, 401, 'missing or wrong secret', path);
    }
    if (req.method !== 'POST' || !match) {
      req.resume();
      return problem(res, 404, 'only POST /hook/<Event> is served', path);
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      req.resume();
      return problem(res, 413, `body of ${declared} bytes is over the ${limit}-byte limit`, path);
    }
    serveHook(req, res, match[1]!, options.handler, limit, (status, reason) =>
      problem(res, status, reason, path),
    );
  });
  refuseTheRest(server, options.onNetworkRefused);
  server.maxConnections = options.maxConnections ?? 4096;
  server.on('drop', () => options.onNetworkRefused?.({ host: '', port: 0, via: 'http' }));
  // Claude Code may keep connections alive between hook calls; closing must not wait for them.
  const { port, close } = await listenLocal(server);
  origin = `http://127.0.0.1:${port}`;
  if (!options.onNetworkRefused) return { url: origin, port, token, close };
  const socks = await startSocksRefuser(options.onNetworkRefused).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return {
    url: origin,
    port,
    token,
    proxy: { httpPort: port, socksPort: socks.port },
    close: () => Promise.all([close(), socks.close()]).then(() => undefined),
  };
}

/** What is no hook call is refused: a CONNECT (never tunnelled), bytes that are no HTTP request. */
function refuseTheRest(server: http.Server, report: ((refusal: NetworkRefusal) => void) | undefined): void {
  // Nothing is ever tunnelled: a CONNECT (an https request through the proxy) is refused.
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    const target = hostPort(req.url ?? '', 443);
    report?.({ ...target, via: 'connect' });
    socket.end(`HTTP/1.1 403 Forbidden\r\n${PROXY_REFUSAL.header}\r\n\r\n${PROXY_REFUSAL.body}`);
  });
  // Bytes that are no HTTP request (TLS sent straight at the port, a SOCKS greeting): refused too.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    socket.on('error', () => {});
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    report?.({ host: '', port: 0, via: 'http' });
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });
}

/**
 * A request's path when it is for the endpoint itself: origin-form (`/hook/Stop`), or absolute-form
 * naming the endpoint's own origin (how Claude Code sends its hooks through the sandbox's proxy).
 * null: a request for another host. Pure.
 */
export function originForm(url: string, origin: string): string | null {
  if (url.startsWith('/')) return url;
  if (url.startsWith(`${origin}/`)) return url.slice(origin.length);
  return null;
}

/** `host:port` of a proxied request's target, the port defaulting to `port`. Pure. */
export function hostPort(target: string, port: number): { host: string; port: number } {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
  try {
    const url = new URL(scheme ? target : `http://${target}`);
    const fallback = !scheme ? port : url.protocol === 'https:' ? 443 : 80;
    return { host: printable(url.hostname), port: url.port ? Number(url.port) : fallback };
  } catch {
    return { host: printable(target), port };
  }
}

function refuseRequest(
  target: string,
  res: http.ServerResponse,
  report: ((refusal: NetworkRefusal) => void) | undefined,
): void {
  report?.({ ...hostPort(target, 80), via: 'http' });
  const [name, value] = PROXY_REFUSAL.header.split(': ') as [string, string];
  res.writeHead(403, { 'content-type': 'text/plain', [name]: value, connection: 'close' });
  res.end(`${PROXY_REFUSAL.body}\n`);
}

/** Reads one hook call's body (at most `limit` bytes), parses it, and answers with the handler's answer. */
function serveHook(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  event: string,
  handler: HookHandler,
  limit: number,
  problem: (status: number, reason: string) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) tooBig = true;
    else chunks.push(chunk);
  });
  req.on('error', () => problem(400, 'request aborted'));
  req.on('end', () => {
    if (tooBig) return problem(413, `body is over the ${limit}-byte limit`);
    let input: unknown;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return problem(400, 'body is not valid JSON');
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return problem(400, 'body is not a JSON object');
    }
    Promise.resolve()
      .then(() => handler(event, input as HookInput))
      .then(
        (answer) => {
          res.writeHead(200, JSON_HEADERS);
          res.end(JSON.stringify(answer ?? {}));
        },
        (error: unknown) => problem(500, `handler failed: ${(error as Error)?.message ?? error}`),
      );
  });
}
