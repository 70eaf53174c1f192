import fs from 'node:fs';
import path from 'node:path';
import { EventLog } from '../ledger/events.js';
import type { Ledger } from '../ledger/paths.js';

/**
 * What `agentbox fetch` refused to import, in `.agents/remotes/events.jsonl` (`fetch_refused`): a
 * publication refused has no folder here to log it in. Names and reasons quote the publication
 * (untrusted): they are JSON-escaped here, and cut short.
 */
export function logRefusal(
  ledger: Ledger,
  entry: {
    readonly remote: string;
    readonly kind: 'run' | 'group';
    readonly name: string;
    readonly why: string;
  },
): void {
  const dir = path.join(ledger.dir, 'remotes');
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch {
    return;
  }
  new EventLog(dir).append({
    event: 'fetch_refused',
    remote: entry.remote,
    kind: entry.kind,
    name: entry.name.slice(0, 200),
    why: entry.why.slice(0, 500),
  });
}
