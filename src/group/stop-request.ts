import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from '../errors.js';
import { writeAtomicSync } from '../util/fs.js';

/*
 * Stopping one attempt of a group. Its process runs every attempt, so a signal would stop them all:
 * `agentbox stop <attempt>` leaves a request in the attempt's run folder (the ledger, which the
 * agent cannot write), and the group's process, which looks twice a second, ends that attempt.
 */

const FILE = 'stop.request';

export function requestAttemptStop(runDir: string, by: string): void {
  writeAtomicSync(path.join(runDir, FILE), `${JSON.stringify({ by, at: new Date().toISOString() })}\n`);
}

/** Who asked, once: the request is removed as it is taken. null: nobody asked. */
export function takeStopRequest(runDir: string): string | null {
  const file = path.join(runDir, FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    return 'agentbox stop';
  }
  fs.rmSync(file, { force: true });
  try {
    const by = (JSON.parse(text) as { by?: unknown }).by;
    return typeof by === 'string' && by.length <= 200 ? by : 'agentbox stop';
  } catch {
    return 'agentbox stop';
  }
}
