import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { AGENTBOX_BIN } from './bin.js';

/** A running `agentbox ui --no-open` and how to reach it. */
export interface Ui {
  readonly child: ChildProcess;
  readonly url: string;
  readonly loginUrl: string;
  readonly token: string;
  readonly port: number;
  output(): string;
  /** Ctrl-C, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `agentbox ui --no-open` in `cwd` (the built bin, or another `bin`) and waits for the
 * address it prints; `open`: without --no-open (the browser opener is $BROWSER's).
 */
export function startUi(
  cwd: string,
  env: Record<string, string>,
  args: string[] = [],
  bin = AGENTBOX_BIN,
  options: { open?: boolean } = {},
): Promise<Ui> {
  const child = spawn(process.execPath, [bin, 'ui', ...(options.open ? [] : ['--no-open']), ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentbox ui printed no address:\n${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /(http:\/\/[^\s/]+)\/\?token=([\w-]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        url: m[1]!,
        loginUrl: `${m[1]}/?token=${m[2]}`,
        token: m[2]!,
        port: Number(new URL(m[1]!).port),
        output: () => out,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGINT');
          return exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`agentbox ui exited (${code}):\n${out}`));
    });
  });
}

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  json(): any;
}

/** A raw HTTP request (any Host header, any body), for the checks a browser's fetch would not let us make. */
export function request(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Debian's Chromium (`.ci/run` installs it when missing); CHROMIUM_PATH names another. */
export const CHROMIUM: string | undefined =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((f) => fs.existsSync(f));

/** Debian's Chromium through playwright-core (loaded here, not by every file that imports this one). */
export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM)
    throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** `page` logged in to `ui` by the address it printed (the token exchange), on the runs list. */
export async function logIn(page: Page, ui: Pick<Ui, 'loginUrl'>): Promise<void> {
  await page.goto(ui.loginUrl);
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
}

/** What a browser keeps from the token exchange: its session cookie (`name=value`) and the page's key. */
export interface RawLogin {
  readonly cookie: string;
  readonly key: string;
}

/** The token exchange, as a browser makes it, for requests made by hand with the page's credentials. */
export async function logInRaw(ui: Pick<Ui, 'port' | 'token'>): Promise<RawLogin> {
  const answer = await request(ui.port, `/?token=${ui.token}`);
  const cookie = String(answer.headers['set-cookie']).split(';')[0]!;
  const key = /<meta name="agentbox-key" content="([\w-]+)">/.exec(answer.text)?.[1];
  if (answer.status !== 200 || !key) throw new Error(`no login: ${answer.status} ${answer.text}`);
  return { cookie, key };
}
