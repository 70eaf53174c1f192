import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_SOCKS_CONNECTIONS, type NetworkRefusal } from '../../src/endpoint/refuse-network.js';
import { type Endpoint, hostPort, originForm, startEndpoint } from '../../src/endpoint/server.js';
import { sandboxSettings } from '../../src/sandbox/settings.js';

/**
 * agentbox's refusing proxy (src/endpoint/refuse-network.ts): the endpoint's port answers Claude
 * Code's proxied hook calls and refuses every other request; the SOCKS port refuses everything.
 * Nothing is ever dialled: a server of the test's own counts the connections that reach it.
 */
let endpoint: Endpoint | undefined;
let target: net.Server | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
  await new Promise<void>((resolve) => (target ? target.close(() => resolve()) : resolve()));
  target = undefined;
});

async function start(maxConnections?: number) {
  const refused: NetworkRefusal[] = [];
  const hooks: string[] = [];
  endpoint = await startEndpoint({
    handler: (event) => {
      hooks.push(event);
      return { ok: true };
    },
    onNetworkRefused: (r) => refused.push(r),
    ...(maxConnections ? { maxConnections } : {}),
  });
  // A server the proxy must never reach.
  let reached = 0;
  target = net.createServer((s) => {
    reached++;
    s.destroy();
  });
  await new Promise<void>((resolve) => target!.listen(0, '127.0.0.1', () => resolve()));
  const targetPort = (target.address() as net.AddressInfo).port;
  return { refused, hooks, targetPort, reached: () => reached };
}

/** Writes `bytes` to `port`, returns everything the server sent until it closed. */
function exchange(port: number, ...chunks: (string | Buffer)[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    socket.on('data', (d) => got.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(got)));
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        socket.write(chunk);
        await new Promise((r) => setTimeout(r, 20));
      }
      socket.end();
    });
  });
}

const tick = () => new Promise((r) => setTimeout(r, 50));
/** Until `done()` holds (a refusal reported after its reply), 5 s at most: a busy machine is slow. */
async function until(done: () => boolean): Promise<void> {
  for (const end = Date.now() + 5000; !done() && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 10));
}

describe('the HTTP side: the endpoint', () => {
  it("serves Claude Code's hook calls in absolute form for its own origin, with the token", async () => {
    const t = await start();
    const body = '{"hook_event_name":"Stop"}';
    const reply = await exchange(
      endpoint!.port,
      `POST ${endpoint!.url}/hook/Stop HTTP/1.1\r\nHost: 127.0.0.1:${endpoint!.port}\r\nAuthorization: Bearer ${endpoint!.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(reply.toString()).toMatch(/^HTTP\/1\.1 200 /);
    expect(reply.toString()).toContain('{"ok":true}');
    expect(t.hooks).toEqual(['Stop']);
    expect(t.refused).toEqual([]);
    expect(endpoint!.proxy).toEqual({ httpPort: endpoint!.port, socksPort: expect.any(Number) });
  });

  it('refuses a request for any other origin, by every spelling, logs it and dials nothing', async () => {
    const t = await start();
    const asks = [
      ['http://example.com/', { host: 'example.com', port: 80 }],
      [`http://127.0.0.1:${t.targetPort}/hook/Stop`, { host: '127.0.0.1', port: t.targetPort }],
      [`http://localhost:${endpoint!.port}/hook/Stop`, { host: 'localhost', port: endpoint!.port }],
      [`http://127.0.0.1:${endpoint!.port}@example.com/`, { host: 'example.com', port: 80 }],
      ['https://example.com/x', { host: 'example.com', port: 443 }],
    ] as const;
    for (const [url] of asks) {
      const reply = (
        await exchange(
          endpoint!.port,
          `GET ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${endpoint!.token}\r\n\r\n`,
        )
      ).toString();
      expect(reply, url).toMatch(/^HTTP\/1\.1 403 /);
      expect(reply, url).toMatch(/x-proxy-error: blocked-by-allowlist/i);
      expect(reply, url).toContain('Connection blocked by network allowlist');
    }
    expect(t.refused).toEqual(asks.map(([, where]) => ({ ...where, via: 'http' })));
    expect(t.hooks).toEqual([]);
    expect(t.reached()).toBe(0);
  });

  it('refuses every CONNECT, its own address included', async () => {
    const t = await start();
    for (const target of ['example.com:443', `127.0.0.1:${t.targetPort}`, `127.0.0.1:${endpoint!.port}`]) {
      const reply = (
        await exchange(endpoint!.port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
      ).toString();
      expect(reply, target).toMatch(/^HTTP\/1\.1 403 Forbidden\r\nX-Proxy-Error: blocked-by-allowlist\r\n/);
    }
    expect(t.refused.map((r) => `${r.via} ${r.host}:${r.port}`)).toEqual([
      'connect example.com:443',
      `connect 127.0.0.1:${t.targetPort}`,
      `connect 127.0.0.1:${endpoint!.port}`,
    ]);
    expect(t.reached()).toBe(0);
  });

  it('bytes that are no HTTP request (TLS or SOCKS sent straight at the port): 400, logged', async () => {
    const t = await start();
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]);
    expect((await exchange(endpoint!.port, hello)).toString()).toMatch(/^HTTP\/1\.1 400 /);
    expect((await exchange(endpoint!.port, Buffer.from([5, 1, 0]))).toString()).toMatch(/^HTTP\/1\.1 400 /);
    await until(() => t.refused.length >= 2);
    expect(t.refused).toEqual([
      { host: '', port: 0, via: 'http' },
      { host: '', port: 0, via: 'http' },
    ]);
    expect(t.reached()).toBe(0);
  });

  it('without onNetworkRefused: no SOCKS port, and another origin is still refused', async () => {
    endpoint = await startEndpoint({ handler: () => ({}) });
    expect(endpoint.proxy).toBeUndefined();
    const reply = await exchange(endpoint.port, 'GET http://example.com/ HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(reply.toString()).toMatch(/^HTTP\/1\.1 403 /);
  });
});

describe('the SOCKS side', () => {
  const greeting = Buffer.from([5, 1, 0]);
  const request = (atyp: number, addr: Buffer, port: number, cmd = 1) =>
    Buffer.concat([Buffer.from([5, cmd, 0, atyp]), addr, Buffer.from([port >> 8, port & 255])]);

  it('refuses a CONNECT by name, IPv4 and IPv6 ("not allowed by ruleset"), logs the host, dials nothing', async () => {
    const t = await start();
    const socks = endpoint!.proxy!.socksPort;
    const name = Buffer.concat([Buffer.from([11]), Buffer.from('example.org')]);
    const replies = [
      await exchange(socks, greeting, request(3, name, 80)),
      await exchange(socks, greeting, request(1, Buffer.from([127, 0, 0, 1]), t.targetPort)),
      await exchange(socks, greeting, request(4, Buffer.from([...Array(15).fill(0), 1]), 22)),
    ];
    for (const reply of replies) expect([...reply.subarray(0, 4)]).toEqual([5, 0, 5, 2]);
    await until(() => t.refused.length >= 3);
    expect(t.refused.map((r) => `${r.via} ${r.host}:${r.port}`)).toEqual([
      'socks example.org:80',
      `socks 127.0.0.1:${t.targetPort}`,
      'socks 0000:0000:0000:0000:0000:0000:0000:0001:22',
    ]);
    expect(t.reached()).toBe(0);
  });

  it('a client that never names a host (user/password only, BIND, garbage, silence) is refused and logged', async () => {
    const t = await start();
    const socks = endpoint!.proxy!.socksPort;
    expect([...(await exchange(socks, Buffer.from([5, 1, 2])))]).toEqual([5, 255]);
    const bind = await exchange(socks, greeting, request(1, Buffer.from([127, 0, 0, 1]), t.targetPort, 2));
    expect([...bind.subarray(2, 4)]).toEqual([5, 7]);
    await exchange(socks, 'GET / HTTP/1.1\r\n\r\n');
    await exchange(socks);
    await until(() => t.refused.length >= 4);
    expect(t.refused).toEqual(Array(4).fill({ host: '', port: 0, via: 'socks' }));
    expect(t.reached()).toBe(0);
  });

  it('closing the endpoint closes the SOCKS port, with nothing reported for the connections it cuts', async () => {
    const t = await start();
    const socks = endpoint!.proxy!.socksPort;
    const open = net.connect(socks, '127.0.0.1');
    open.on('error', () => {});
    await new Promise((r) => open.once('connect', r));
    await tick();
    await endpoint!.close();
    endpoint = undefined;
    await tick();
    expect(t.refused).toEqual([]);
    await expect(exchange(socks, greeting)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('a flood of connections', () => {
  it('past its limit (the SOCKS port: MAX_SOCKS_CONNECTIONS) each port drops the rest and reports them; the endpoint answers again', async () => {
    const t = await start(40);
    const open: net.Socket[] = [];
    const connect = (port: number) =>
      new Promise<void>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve());
        s.on('error', () => resolve());
        open.push(s);
      });
    try {
      for (let i = 0; i < 40 + 3; i++) await connect(endpoint!.port);
      for (let i = 0; i < MAX_SOCKS_CONNECTIONS + 3; i++) await connect(endpoint!.proxy!.socksPort);
      const dropped = (via: string) => t.refused.filter((r) => r.via === via && r.host === '').length;
      await until(() => dropped('http') >= 3 && dropped('socks') >= 3);
      expect(dropped('http')).toBe(3);
      expect(dropped('socks')).toBe(3);
    } finally {
      for (const s of open) s.destroy();
    }
    await tick();
    // The held connections gone, a hook call is served again.
    const reply = await fetch(`${endpoint!.url}/hook/Stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${endpoint!.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(reply.status).toBe(200);
  });
});

describe('pure parts', () => {
  it('originForm: only the endpoint itself is served', () => {
    const origin = 'http://127.0.0.1:4000';
    expect(originForm('/hook/Stop', origin)).toBe('/hook/Stop');
    expect(originForm('http://127.0.0.1:4000/hook/Stop', origin)).toBe('/hook/Stop');
    expect(originForm('http://127.0.0.1:40000/hook/Stop', origin)).toBeNull();
    expect(originForm('http://127.0.0.1:4000@evil/hook', origin)).toBeNull();
    expect(originForm('example.com:443', origin)).toBeNull();
  });

  it('hostPort: the target of a proxied request', () => {
    expect(hostPort('example.com:8443', 443)).toEqual({ host: 'example.com', port: 8443 });
    expect(hostPort('example.com', 443)).toEqual({ host: 'example.com', port: 443 });
    expect(hostPort('http://example.com/a', 80)).toEqual({ host: 'example.com', port: 80 });
    expect(hostPort('https://example.com/a', 80)).toEqual({ host: 'example.com', port: 443 });
    expect(hostPort('[::1]:22', 443)).toEqual({ host: '[::1]', port: 22 });
    expect(hostPort('not a url', 80)).toEqual({ host: 'not?a?url', port: 80 });
  });

  it("sandboxSettings puts agentbox's ports in the sandbox's network block", () => {
    const settings = sandboxSettings({
      writable: [],
      denyRead: [],
      allowRead: [],
      denyWrite: [],
      autoAllowBash: false,
      allowedDomains: ['127.0.0.1:4000'],
      proxyPorts: { httpPort: 4000, socksPort: 4001 },
    }) as { sandbox: { network: unknown } };
    expect(settings.sandbox.network).toEqual({
      allowedDomains: ['127.0.0.1:4000'],
      httpProxyPort: 4000,
      socksProxyPort: 4001,
    });
  });
});
