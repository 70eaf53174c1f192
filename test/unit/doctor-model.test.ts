import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleCredentials } from '../../src/claude/model-key.js';
import { apiMessage, type ModelProbe } from '../../src/claude/probe.js';
import { checkModel, modelResult, withVisibleCredentials } from '../../src/doctor/auth.js';
import { type ModelServer, startModelServer } from '../fixtures/model-server/index.js';

/** A loopback port nothing listens on: bound by us, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server answering every request with `status` and an API error body (or never, for null). */
async function answering(status: number | null): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    if (status === null) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'x', message: `scripted ${status}` } }));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

const answered = (status: number, message = ''): ModelProbe => ({
  kind: 'answered',
  url: 'http://m',
  status,
  ms: 12.4,
  message,
});

describe('modelResult: "can reach a model" only when a request was answered (issue 29)', () => {
  it.each<[string, ModelProbe, boolean, boolean, RegExp]>([
    [
      '200',
      answered(200),
      true,
      true,
      /^Claude Code can reach a model: http:\/\/m answered HTTP 200 in 12 ms$/,
    ],
    [
      '401 with a key sent',
      answered(401, 'invalid x-api-key'),
      true,
      false,
      /refusing the credentials: invalid x-api-key/,
    ],
    ['401, no key to send', answered(401), false, true, /no key from the environment to send/],
    ['403', answered(403, 'no'), true, false, /HTTP 403 in 12 ms, refusing the credentials: no/],
    ['500', answered(500, 'overloaded'), true, false, /^http:\/\/m answered HTTP 500 in 12 ms: overloaded$/],
    ['404', answered(404), true, false, /^http:\/\/m answered HTTP 404 in 12 ms$/],
    [
      'refused',
      { kind: 'unreachable', url: 'http://m', code: 'ECONNREFUSED', message: 'x' },
      true,
      false,
      /^connection refused at http:\/\/m: nothing listens there/,
    ],
    [
      'dns',
      { kind: 'unreachable', url: 'http://m', code: 'ENOTFOUND', message: 'x' },
      true,
      false,
      /cannot resolve the host of http:\/\/m \(ENOTFOUND\)/,
    ],
    [
      'timeout',
      { kind: 'timeout', url: 'http://m', ms: 10_000 },
      true,
      false,
      /^no answer from http:\/\/m within 10 s$/,
    ],
  ])('%s', (_, probe, sentKey, ok, detail) => {
    const result = modelResult(probe, sentKey);
    expect(result.ok).toBe(ok);
    expect(result.detail).toMatch(detail);
    if (!ok) expect(result.fix).toBeTruthy();
  });

  it('a proxy in the environment: not checked, not claimed', () => {
    const result = modelResult({ kind: 'not-checked', url: 'http://m', why: 'via proxy' }, true);
    expect(result).toMatchObject({ ok: false, skipped: true, detail: 'not checked: via proxy' });
  });

  it.each([
    [
      '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
      'invalid x-api-key',
    ],
    ['<html>\n<body>Bad   Gateway</body></html>', '<html> <body>Bad Gateway</body></html>'],
    ['', ''],
  ])('apiMessage(%j)', (body, message) => {
    expect(apiMessage(body)).toBe(message);
  });
});

describe('checkModel asks the base URL for real', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer([]);
  });
  afterAll(async () => model?.close());
  const env = (url: string) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-test' });

  it('the scripted model server answers: ok, with no model call spent', async () => {
    const result = await checkModel(env(model.url), null);
    expect(result.ok).toBe(true);
    expect(result.detail).toMatch(
      new RegExp(`^Claude Code can reach a model: ${model.url} answered HTTP 200 in \\d+ ms$`),
    );
    expect(model.requests).toHaveLength(0);
    expect(model.otherRequests).toContainEqual({ method: 'POST', path: '/v1/messages/count_tokens' });
  });

  it('nothing listens at the base URL: connection refused, with the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await checkModel(env(url), null);
    expect(result.ok).toBe(false);
    expect(result.detail).toBe(
      `connection refused at ${url}: nothing listens there — every run would fail at its first model call`,
    );
    expect(result.fix).toContain('ANTHROPIC_BASE_URL');
  });

  it.each([
    [401, 'refusing the credentials: scripted 401'],
    [500, ': scripted 500'],
  ])('a server answering %i: fails with the status', async (status, says) => {
    const server = await answering(status);
    try {
      const result = await checkModel(env(server.url), 'claude-x');
      expect(result.ok).toBe(false);
      expect(result.detail).toContain(`${server.url} answered HTTP ${status} in`);
      expect(result.detail).toContain(says);
    } finally {
      await server.close();
    }
  });
});

describe('doctor says which credentials a run could read', () => {
  const passed = { name: 'claude login', ok: true, detail: 'Claude Code has credentials (api key)' };
  it.each([
    [{ ANTHROPIC_API_KEY: 'k' }, []],
    [{ CLAUDE_CODE_OAUTH_TOKEN: 'o' }, []],
    [{ ANTHROPIC_AUTH_TOKEN: 't' }, ['ANTHROPIC_AUTH_TOKEN']],
    [{ ANTHROPIC_AUTH_TOKEN: 't', ANTHROPIC_API_KEY: 'k' }, ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_API_KEY']],
    [{ ANTHROPIC_API_KEY: 'k', ANTHROPIC_CUSTOM_HEADERS: 'X-Key: h' }, ['ANTHROPIC_CUSTOM_HEADERS']],
    [{ ANTHROPIC_FOUNDRY_API_KEY: 'f' }, []],
    [{ ANTHROPIC_FOUNDRY_API_KEY: 'f', CLAUDE_CODE_USE_FOUNDRY: '1' }, ['ANTHROPIC_FOUNDRY_API_KEY']],
  ])('%j → %j', (env, names) => {
    expect(visibleCredentials(env)).toEqual(names);
    const check = withVisibleCredentials(passed, env);
    if (names.length === 0) expect(check).toBe(passed);
    else {
      expect(check).toMatchObject({ ok: true, warn: true });
      expect(check.detail).toContain(`a run's commands can read ${names.join(', ')}`);
    }
  });

  it('a failed login check stays as it was', () => {
    const failed = { name: 'claude login', ok: false, detail: 'not logged in', fix: 'log in' };
    expect(withVisibleCredentials(failed, { ANTHROPIC_AUTH_TOKEN: 't' })).toBe(failed);
  });
});
