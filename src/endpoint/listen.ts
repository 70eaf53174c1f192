import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentboxError } from '../errors.js';

export interface Listening {
  readonly port: number;
  /** Idempotent: closes the server and every connection it holds, once. */
  close(): Promise<void>;
}

/**
 * Starts `server` on `host` (127.0.0.1 unless told otherwise) and a port (0: a free one), with the
 * close both of agentbox's servers need: keep-alive connections (Claude Code's hooks, a browser)
 * never hold it open, and a second close is the first one's promise.
 */
export async function listenLocal(
  server: http.Server,
  options: { readonly host?: string; readonly port?: number } = {},
): Promise<Listening> {
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  // What the kernel bound, not how the host was spelt: `0`, `0.0.0.00`, `::0` and a name that
  // resolves to 0.0.0.0 all listen on every address, and only the literal spellings were refused.
  if (address === '0.0.0.0' || address === '::') {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw new AgentboxError(
      'USAGE',
      `${JSON.stringify(options.host)} is every address of this machine (${address}): agentbox listens on one address only`,
      {
        hint: 'name the address your browser will use, e.g. --host 192.168.1.5, or keep the default 127.0.0.1 and forward the port (ssh -L)',
      },
    );
  }
  let closed: Promise<void> | undefined;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
