import fs from 'node:fs';
import net from 'node:net';
import type { RunCommand } from '../context.js';
import type { ServeLog } from './admit.js';
import { serveConnection } from './connection.js';

/*
 * The resident agentbox's listening side (src/commands/serve.ts): its connections, each served to
 * its end; its stop (Ctrl-C, `agentbox serve --stop`, or `--idle` time with nothing to do), which
 * stops the commands it runs cleanly and waits for them; and its socket, removed at the end only
 * while it is still the one this server made.
 */
export class ResidentServer {
  private readonly stops = new Set<(by: string) => void>();
  private readonly active = new Set<Promise<void>>();
  private readonly server: net.Server;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly ended: Promise<void>;
  private end!: () => void;

  constructor(
    private readonly runCommand: RunCommand,
    private readonly log: ServeLog,
    /** Stop after this long with no command (`label` says how long); none: only when told. */
    private readonly idle?: { readonly ms: number; readonly label: string },
  ) {
    this.ended = new Promise((resolve) => {
      this.end = resolve;
    });
    this.server = net.createServer((socket) => this.connection(socket));
  }

  /** Listens on `file` (mode 600); resolves once the server has stopped and its socket is removed. */
  async listen(file: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(file, () => resolve());
    });
    fs.chmodSync(file, 0o600);
    const ours = fs.statSync(file).ino;
    // A server whose socket is gone or another's (two started at once: the later one's unlink took
    // the name) is reached by nobody: it stops, rather than wait for its idle time or forever.
    const watch = setInterval(() => {
      if (!isOurs(file, ours)) this.stop('its socket was removed or taken by another server');
    }, SOCKET_CHECK_MS);
    watch.unref();
    void this.ended.then(() => {
      clearInterval(watch);
      if (isOurs(file, ours)) fs.rmSync(file, { force: true });
    });
    this.waitForWork();
  }

  /** Resolves once stopped: every command it ran has ended, its socket removed. */
  stopped(): Promise<void> {
    return this.ended.then(() => undefined);
  }

  /** Stops serving; how many commands it runs, not counting `asking` connections (a stop request's). */
  stop(by: string, asking = 0): number {
    if (this.closed) return 0;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const running = this.active.size - asking;
    this.log(`stopping (${by}): ${running} command(s) running`);
    this.server.close();
    for (const stop of this.stops) stop(`the resident agentbox stopping (${by})`);
    void Promise.allSettled([...this.active]).then(() => this.end());
    return running;
  }

  private connection(socket: net.Socket): void {
    clearTimeout(this.idleTimer);
    const served = serveConnection(socket, {
      runCommand: this.runCommand,
      log: this.log,
      onStop: (stop) => {
        this.stops.add(stop);
        return () => this.stops.delete(stop);
      },
      stopServer: (by, asking) => this.stop(by, asking),
    });
    this.active.add(served);
    void served.finally(() => {
      this.active.delete(served);
      this.waitForWork();
    });
  }

  private waitForWork(): void {
    if (!this.idle || this.active.size > 0 || this.closed) return;
    const { ms, label } = this.idle;
    this.idleTimer = setTimeout(() => this.stop(`unused for ${label}`), ms);
  }
}

/** How often a server checks that its socket is still there, and its own. */
const SOCKET_CHECK_MS = 5_000;

/** Whether the socket at `file` is still the one this server made (inode `ino`). */
function isOurs(file: string, ino: number): boolean {
  try {
    return fs.lstatSync(file).ino === ino;
  } catch {
    return false;
  }
}
