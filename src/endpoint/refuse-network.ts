import net from 'node:net';

/**
 * The run's network, when it reaches nothing but its own endpoint (every read-only run, and a fix
 * run without `sandbox.allowed_domains`): agentbox answers for Claude Code's sandbox proxies
 * (`sandbox.network.httpProxyPort`/`socksProxyPort`), so claude starts none of its own (their start
 * is half of its sandbox's, docs/benchmarks.md). The kernel boundary is unchanged: the command runs
 * in a network namespace of its own and reaches these two ports only through the sandbox's bridge.
 * Nothing here ever opens a connection: every request is refused and reported, the endpoint's own
 * hook calls excepted (src/endpoint/server.ts).
 */

/** One refused connection: where it asked to go, and by which door. */
export interface NetworkRefusal {
  readonly host: string;
  readonly port: number;
  readonly via: 'http' | 'connect' | 'socks';
}

/** The refusal Claude Code's own proxy gives (its header, so tools and logs read it the same). */
export const PROXY_REFUSAL = {
  header: 'X-Proxy-Error: blocked-by-allowlist',
  body: 'Connection blocked by network allowlist',
} as const;

/** A host name as the client sent it, cut to DNS's length, with nothing but printable ASCII. Pure. */
export function printable(host: string): string {
  return host.slice(0, 255).replace(/[^\x21-\x7e]/g, '?');
}

/**
 * Connections the SOCKS port holds at once (only the agent's commands reach it, and all are
 * refused): one that opens thousands must not take agentbox's file descriptors (its ledger writes)
 * with them. The ones past it are dropped and reported.
 */
export const MAX_SOCKS_CONNECTIONS = 128;

/** How long a SOCKS client may take to say where it goes. */
const SOCKS_TIMEOUT_MS = 10_000;

/**
 * A SOCKS5 server on a free loopback port that refuses every request ("connection not allowed by
 * ruleset") after reading where it was for: @pondwader/socks5-server speaks the protocol (loaded at
 * the first connection; most runs have none). Its connection handler is replaced too, so no path of
 * the library dials anything.
 */
export async function startSocksRefuser(
  report: (refusal: NetworkRefusal) => void,
): Promise<{ readonly port: number; close(): Promise<void> }> {
  let socks: Promise<{ _handleConnection(socket: net.Socket): unknown }> | undefined;
  // A client that leaves before naming a host (no method offered that is served, a bad request) is
  // reported as it goes.
  const reported = new WeakSet<object>();
  const load = async () => {
    const { createServer } = await import('@pondwader/socks5-server');
    const server = createServer();
    server.setRulesetValidator((conn) => {
      reported.add(conn.socket);
      report({ host: printable(String(conn.destAddress)), port: Number(conn.destPort), via: 'socks' });
      return false;
    });
    server.setConnectionHandler((_conn, sendStatus) => sendStatus('CONNECTION_NOT_ALLOWED'));
    return server;
  };
  const sockets = new Set<net.Socket>();
  let closed: Promise<void> | undefined;
  const listener = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (!reported.has(socket) && !closed) report({ host: '', port: 0, via: 'socks' });
    });
    socket.on('error', () => socket.destroy());
    socket.setTimeout(SOCKS_TIMEOUT_MS, () => socket.destroy());
    socks ??= load();
    socks.then(
      (server) => server._handleConnection(socket),
      () => socket.destroy(),
    );
  });
  listener.maxConnections = MAX_SOCKS_CONNECTIONS;
  listener.on('drop', () => report({ host: '', port: 0, via: 'socks' }));
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (listener.address() as net.AddressInfo).port;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}
