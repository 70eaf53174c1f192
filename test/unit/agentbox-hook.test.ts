import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOOK_SCRIPT } from '../../src/endpoint/settings.js';
import { tempDir } from '../helpers/git-repo.js';

/** The real hook script, run by node as Claude Code runs it: event on stdin, address book as argv. */
function runHook(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [HOOK_SCRIPT, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

interface Endpoint {
  url: string;
  received: { path: string; auth: string | undefined; body: string }[];
  close(): Promise<void>;
}

async function endpoint(status: number, answer: string): Promise<Endpoint> {
  const received: Endpoint['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let dir: string;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function setUp(status = 200, answer = '{"continue":true}') {
  dir = tempDir();
  const ep = await endpoint(status, answer);
  closers.push(ep.close);
  const book = path.join(dir, 'hook.json');
  fs.writeFileSync(book, JSON.stringify({ url: ep.url, token: 'secret-token' }));
  return { ep, book };
}

const EVENT = '{"hook_event_name":"SessionStart","session_id":"s1"}';

describe('hooks/agentbox-hook.mjs', () => {
  it('forwards the event to the endpoint with the token and prints the answer', async () => {
    const { ep, book } = await setUp();
    const out = await runHook(['SessionStart', book], {}, EVENT);
    expect(out).toEqual({ code: 0, stdout: '{"continue":true}', stderr: '' });
    expect(ep.received).toEqual([{ path: '/hook/SessionStart', auth: 'Bearer secret-token', body: EVENT }]);
  });

  it('AGENTBOX=0: exits 0 at once, sends nothing, says nothing (unless debugging)', async () => {
    const { ep, book } = await setUp();
    expect(await runHook(['SessionStart', book], { AGENTBOX: '0' }, EVENT)).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
    const debug = await runHook(['SessionStart', book], { AGENTBOX: '0', AGENTBOX_HOOK_DEBUG: '1' }, EVENT);
    expect(debug).toEqual({ code: 0, stdout: '', stderr: 'agentbox-hook: off (AGENTBOX=0)\n' });
    expect(ep.received).toEqual([]);
  });

  it('AGENTBOX_HOOK_DEBUG=1 says what it sent', async () => {
    const { ep, book } = await setUp();
    const out = await runHook(['SessionStart', book], { AGENTBOX_HOOK_DEBUG: '1' }, EVENT);
    expect(out).toEqual({
      code: 0,
      stdout: '{"continue":true}',
      stderr: `agentbox-hook: SessionStart sent to ${ep.url}: 200\n`,
    });
  });

  it.each([
    [
      'no address book',
      () => ['SessionStart', path.join(dir, 'missing.json')],
      /^agentbox-hook: no address book: ENOENT/,
    ],
    [
      'a bad event name',
      (book: string) => ['Session Start; rm', book],
      /^agentbox-hook: not an event name: Session Start; rm\n$/,
    ],
    [
      'an address book without a token',
      () => {
        const bad = path.join(dir, 'bad.json');
        fs.writeFileSync(bad, '{"url":"http://127.0.0.1:9"}');
        return ['SessionStart', bad];
      },
      /^agentbox-hook: the address book has no url or token\n$/,
    ],
  ])('fails open on %s: exit 0, silent; the debug switch says why', async (_name, args, why) => {
    const { ep, book } = await setUp();
    const argv = args(book);
    expect(await runHook(argv, {}, EVENT)).toEqual({ code: 0, stdout: '', stderr: '' });
    const debug = await runHook(argv, { AGENTBOX_HOOK_DEBUG: '1' }, EVENT);
    expect(debug.code).toBe(0);
    expect(debug.stdout).toBe('');
    expect(debug.stderr).toMatch(why);
    expect(ep.received).toEqual([]);
  });

  it('fails open when the endpoint is gone or refuses: no output, exit 0; debugging says why', async () => {
    const { ep, book } = await setUp(401, '{"error":"bad token"}');
    const refused = await runHook(['SessionStart', book], { AGENTBOX_HOOK_DEBUG: '1' }, EVENT);
    expect(refused).toEqual({
      code: 0,
      stdout: '',
      stderr: `agentbox-hook: SessionStart sent to ${ep.url}: 401\n`,
    });
    await ep.close();
    closers.length = 0;
    expect(await runHook(['SessionStart', book], {}, EVENT)).toEqual({ code: 0, stdout: '', stderr: '' });
    const gone = await runHook(['SessionStart', book], { AGENTBOX_HOOK_DEBUG: '1' }, EVENT);
    expect(gone.stderr).toMatch(new RegExp(`^agentbox-hook: cannot reach ${ep.url}: connect ECONNREFUSED`));
  });
});
