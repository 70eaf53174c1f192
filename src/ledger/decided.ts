import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { appendNoFollow } from '../util/append.js';
import { isRunName } from './names.js';
import type { Ledger } from './paths.js';

/*
 * `.agents/remotes/<remote>.decided.jsonl`: the fetched runs a person merged or discarded here whose
 * folders `agentbox gc` then removed. The decision outlives the folder: a later publication of the
 * run is not imported again as a new run to review (a gc'd MERGED run came back in REVIEW, offered
 * for merge again). One JSON line a run, appended by gc, read once a fetch.
 */

export interface Decided {
  /** Its name here when it was removed. */
  readonly local: string;
  readonly status: 'MERGED' | 'DISCARDED';
}

function decidedFile(ledger: Ledger, remote: string): string {
  return path.join(ledger.dir, 'remotes', `${remote}.decided.jsonl`);
}

/** Records that `run` (its name on `remote`) was decided here, as its folder `local` goes. */
export function recordDecided(ledger: Ledger, remote: string, run: string, decided: Decided): void {
  const file = decidedFile(ledger, remote);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  appendNoFollow(file, `${JSON.stringify({ run, ...decided, at: new Date().toISOString() })}\n`);
}

/** The runs of `remote` decided here and removed since, by their name there. */
export function readDecided(ledger: Ledger, remote: string): Map<string, Decided> {
  const file = decidedFile(ledger, remote);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return new Map();
    throw fsError(error, 'read', file);
  }
  const out = new Map<string, Decided>();
  for (const line of text.split('\n')) {
    let value: { run?: unknown; local?: unknown; status?: unknown };
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const { run, local, status } = value ?? {};
    if (typeof run !== 'string' || !isRunName(run) || typeof local !== 'string' || !isRunName(local))
      continue;
    if (status === 'MERGED' || status === 'DISCARDED') out.set(run, { local, status });
  }
  return out;
}
