import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { listenLocal } from '../endpoint/listen.js';
import type { Ledger } from '../ledger/index.js';
import type { Env } from '../util/env.js';
import { modulePreloads, WEB_DIR, webAssets } from './assets.js';
import { checkRequest, hostAllowed, type Secrets, type Served, sameSecret, sessionCookie } from './auth.js';
import { LedgerWatcher, serveEvents } from './events.js';
import { BASE_HEADERS, HttpError, send } from './http.js';
import { IdleRelease, type IdleReleaseOptions } from './idle-memory.js';
import { route } from './routes.js';

export interface UiServerOptions {
  readonly root: string;
  readonly ledger: Ledger;
  readonly env: Env;
  /** The token, session and page-key secrets (kept across restarts by src/web/secrets.ts). */
  readonly secrets: Secrets;
  /** 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1; anything else is the caller's explicit choice (and still needs the token). */
  readonly host?: string;
  readonly maxBodyBytes?: number;
  /** Every refused request, with its status and reason; never throws into the server. */
  readonly onProblem?: (problem: { status: number; reason: string; method: string; path: string }) => void;
  /** When the heap is given back after a quiet spell (src/web/idle-memory.ts). */
  readonly idleRelease?: IdleReleaseOptions;
}

export interface UiServer {
  /** The clean address, e.g. http://127.0.0.1:4321 */
  readonly url: string;
  /** The address that logs a browser in: `url/?token=…`. */
  readonly loginUrl: string;
  readonly token: string;
  readonly port: number;
  /** Work done outside a request (the recovery check at start) ended: memory may be given back after it. */
  worked(): void;
  close(): Promise<void>;
}

/** No inline script, nothing from another origin: what the page may load and run. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * `agentbox ui`'s server, on the same footing as the hook endpoint (src/endpoint/listen.ts:
 * loopback by default, idempotent close). It holds no state of its own: every answer is read from the ledger, every
 * action is the CLI's command, so killing it never harms a run and a restart shows all as it was.
 * Every request is checked before it is routed (Host, then token or cookie, then the page's key and
 * CSRF for a browser's); the token in the printed URL is exchanged once per browser for an HttpOnly,
 * SameSite=Strict cookie and the page's key (src/web/auth.ts says why both), and the browser is sent
 * on to the clean URL.
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const secrets = options.secrets;
  const host = options.host ?? '127.0.0.1';
  const limit = options.maxBodyBytes ?? 1024 * 1024;
  const watcher = new LedgerWatcher(options.ledger);
  let served: Served = { hosts: [], origins: [], cookie: '' };
  const assets = webAssets();
  const preloads = modulePreloads(assets);
  const idle = new IdleRelease(options.idleRelease);

  const refuse = (req: http.IncomingMessage, res: http.ServerResponse, status: number, reason: string) => {
    options.onProblem?.({ status, reason, method: req.method ?? '?', path: (req.url ?? '/').split('?')[0]! });
    req.resume();
    send(res, { status, body: { error: reason } });
  };

  const server = http.createServer((req, res) => {
    idle.during(res);
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const facts = { method, url: req.url, headers: req.headers };
    if (!hostAllowed(req.headers.host, served.hosts)) {
      return refuse(req, res, 403, `Host ${req.headers.host ?? '(none)'} is not this server`);
    }
    const asset = assets.get(url.pathname);
    if (asset && method === 'GET') return sendFile(res, asset.file, asset.type);
    if (url.pathname === '/' && method === 'GET' && url.searchParams.has('token')) {
      if (!sameSecret(url.searchParams.get('token') ?? '', secrets.token))
        return refuse(req, res, 401, 'wrong token');
      return sendLogin(res, served.cookie, secrets);
    }
    const verdict = checkRequest(facts, secrets, served);
    if (!verdict.ok) {
      // The page itself gets a page for the person, not JSON: refused and logged all the same.
      if (url.pathname !== '/' || verdict.status !== 401)
        return refuse(req, res, verdict.status, verdict.reason);
      options.onProblem?.({ status: 401, reason: verdict.reason, method, path: '/' });
      return sendLoginHint(res);
    }
    if (url.pathname === '/' && method === 'GET') return sendPage(res, preloads);
    if (url.pathname === '/api/events' && method === 'GET') return serveEvents(req, res, watcher);
    answerApi(req, res, url, options, limit);
  });
  const { port, ...listening } = await listenLocal(server, { host, port: options.port ?? 0 });
  served = servedAt(host, port);
  const url = `http://${urlHost(host)}:${port}`;
  return {
    url,
    loginUrl: `${url}/?token=${secrets.token}`,
    token: secrets.token,
    port,
    worked: () => idle.busy(),
    close() {
      idle.close();
      watcher.close();
      return listening.close();
    },
  };
}

/** An address as a URL and a Host header name it: an IPv6 literal in brackets (`[::1]`). */
const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** The Host headers and Origins this server answers to (its address, and `localhost` for 127.0.0.1), and its cookie. */
function servedAt(host: string, port: number): Served {
  const names = host === '127.0.0.1' ? ['127.0.0.1', 'localhost'] : [urlHost(host)];
  return {
    hosts: names.map((name) => `${name}:${port}`.toLowerCase()),
    origins: names.map((name) => `http://${name}:${port}`.toLowerCase()),
    cookie: sessionCookie(port),
  };
}

function sendFile(res: http.ServerResponse, file: string, type: string): void {
  fs.readFile(file, (error, data) => {
    if (error) {
      send(res, { status: 404, body: { error: `missing asset ${path.basename(file)}: a broken install` } });
      return;
    }
    res.writeHead(200, { ...BASE_HEADERS, 'content-type': type, 'content-security-policy': CSP });
    res.end(data);
  });
}

function sendPage(res: http.ServerResponse, preloads: string): void {
  fs.readFile(path.join(WEB_DIR, 'index.html'), 'utf8', (error, html) => {
    if (error) {
      send(res, { status: 500, body: { error: 'missing web/index.html: a broken install' } });
      return;
    }
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
    });
    res.end(html.replace('__PRELOADS__', preloads));
  });
}

function sendLoginHint(res: http.ServerResponse): void {
  res.writeHead(401, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CSP,
  });
  // web/login.js keeps the place a link named for after the token exchange (its redirect ends at `/`).
  res.end(
    '<!doctype html><html lang="en"><meta charset="utf-8"><title>agentbox</title><script type="module" src="/assets/login.js"></script><p>Open the address <code>agentbox ui</code> printed (it carries the token), or restart it.</p>',
  );
}

/**
 * The token was right: the browser gets the session cookie, and the page's key in a page that keeps
 * it in this origin's storage and goes on to the clean URL (web/login-done.js). Only this answer,
 * which the token alone gets, ever carries the key.
 */
function sendLogin(res: http.ServerResponse, cookie: string, secrets: Secrets): void {
  res.writeHead(200, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CSP,
    'set-cookie': `${cookie}=${secrets.session}; HttpOnly; SameSite=Strict; Path=/`,
  });
  res.end(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="agentbox-key" content="${secrets.csrf}"><title>agentbox</title><script type="module" src="/assets/login-done.js"></script><p id="login">Logging in…</p>`,
  );
}

/** A checked request to the JSON API: the route's reply, or its error as a status. */
function answerApi(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  options: UiServerOptions,
  limit: number,
): void {
  const method = req.method ?? 'GET';
  route({ root: options.root, ledger: options.ledger, env: options.env, limit }, req, url).then(
    (reply) => send(res, reply),
    (error: unknown) => {
      if (error instanceof HttpError) {
        options.onProblem?.({ status: error.status, reason: error.message, method, path: url.pathname });
        send(res, { status: error.status, body: { error: error.message, ...error.extra } });
      } else {
        send(res, { status: 500, body: { error: `agentbox ui: ${(error as Error)?.message ?? error}` } });
      }
    },
  );
}
