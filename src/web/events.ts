import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { groupDir, listGroupNames } from '../group/store.js';
import { GROUP_STATE_FILE } from '../group/types.js';
import { activeRunNames } from '../ledger/active.js';
import type { Ledger } from '../ledger/index.js';
import { BASE_HEADERS } from './http.js';

/** What changed: a run's state or events (`run`), or the ledger's list of runs (`runs`). */
export interface Change {
  readonly run: string | null;
}

/** The newest groups whose state.json is watched (a group that runs is among the newest). */
const WATCHED_GROUPS = 16;

/** A file's size and mtime in one string, or '' when it does not exist. */
function signature(file: string): string {
  try {
    const s = fs.statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return '';
  }
}

/**
 * Watches the ledger by polling, cheaply: INDEX.jsonl (every status change of every run is a line
 * there) and the state.json and events.jsonl of ACTIVE runs only (from `.agents/active/`), every
 * `intervalMs`. Polling rather than fs.watch: it works the same on every filesystem, sees writes by
 * other processes (runs are their own processes) and costs a few stats per tick.
 */
export class LedgerWatcher {
  private readonly seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(
    private readonly ledger: Ledger,
    private readonly intervalMs = 100,
  ) {}

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.tick(false);
      this.timer = setInterval(() => this.tick(true), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(emit: boolean): void {
    const changes: Change[] = [];
    const check = (key: string, file: string, change: Change) => {
      const now = signature(file);
      if (this.seen.get(key) !== now) {
        this.seen.set(key, now);
        if (emit) changes.push(change);
      }
    };
    check('index', this.ledger.indexJsonl, { run: null });
    // A group's own state (halted, ended, merged) is not a run's: the newest groups are watched too.
    for (const name of listGroupNames(this.ledger).slice(-WATCHED_GROUPS))
      check(`group/${name}`, path.join(groupDir(this.ledger, name), GROUP_STATE_FILE), { run: null });
    for (const name of activeRunNames(this.ledger)) {
      const dir = path.join(this.ledger.runsDir, name);
      check(`${name}/state`, path.join(dir, 'state.json'), { run: name });
      check(`${name}/events`, path.join(dir, 'events.jsonl'), { run: name });
      check(`${name}/stream`, path.join(dir, 'raw', 'stream.jsonl'), { run: name });
    }
    const sent = new Set<string>();
    for (const change of changes) {
      const key = change.run ?? '';
      if (sent.has(key)) continue;
      sent.add(key);
      for (const listener of this.listeners) listener(change);
    }
  }
}

/**
 * `GET /api/events`: Server-Sent Events, a `change` message per change; a comment every 15 s keeps
 * proxies from closing the stream, and `retry` tells the browser to reconnect after 1 s (after a
 * server restart the page reconnects by itself and reloads what it shows).
 */
export function serveEvents(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  watcher: LedgerWatcher,
): void {
  res.writeHead(200, {
    ...BASE_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
  });
  res.write('retry: 1000\n: connected\n\n');
  const unsubscribe = watcher.subscribe((change) => {
    res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
  });
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
  ping.unref();
  const end = () => {
    clearInterval(ping);
    unsubscribe();
  };
  req.on('close', end);
  res.on('close', end);
}
