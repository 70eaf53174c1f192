import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { writeAtomicSync } from '../util/fs.js';

/**
 * A run's inbox for `agentbox inject`: one file per message in `inbox/pending/`, named so that
 * they sort in the order they were queued. Taking a message is a rename into `inbox/delivered/`:
 * atomic, so each message is delivered exactly once even if two takers race.
 */
export function inboxDirs(runDir: string): { pending: string; delivered: string } {
  return {
    pending: path.join(runDir, 'inbox', 'pending'),
    delivered: path.join(runDir, 'inbox', 'delivered'),
  };
}

let sequence = 0;

export function enqueue(runDir: string, text: string): string {
  const { pending } = inboxDirs(runDir);
  try {
    fs.mkdirSync(pending, { recursive: true });
  } catch (error) {
    throw fsError(error, 'create the inbox', pending);
  }
  // Milliseconds, then a high-resolution tick and a per-process counter: later means larger.
  const id = `${Date.now().toString().padStart(15, '0')}-${process.hrtime.bigint().toString().padStart(20, '0')}-${String(sequence++).padStart(6, '0')}-${randomBytes(3).toString('hex')}`;
  // Atomic: a taker reads only whole `.json` files (the temp file has another ending).
  writeAtomicSync(
    path.join(pending, `${id}.json`),
    JSON.stringify({ id, text, queued_at: new Date().toISOString() }),
  );
  return id;
}

export interface InboxMessage {
  readonly id: string;
  readonly text: string;
}

/** Takes every pending message, oldest first; each one only once. */
export function takePending(runDir: string): InboxMessage[] {
  const { pending, delivered } = inboxDirs(runDir);
  let names: string[];
  try {
    names = fs
      .readdirSync(pending)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
  if (names.length === 0) return [];
  fs.mkdirSync(delivered, { recursive: true });
  const taken: InboxMessage[] = [];
  for (const name of names) {
    const to = path.join(delivered, name);
    try {
      fs.renameSync(path.join(pending, name), to);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') continue; // someone else took it
      throw error;
    }
    const message = JSON.parse(fs.readFileSync(to, 'utf8')) as { id: string; text: string };
    taken.push({ id: message.id, text: message.text });
  }
  return taken;
}

export function pendingCount(runDir: string): number {
  try {
    return fs.readdirSync(inboxDirs(runDir).pending).filter((n) => n.endsWith('.json')).length;
  } catch {
    return 0;
  }
}
