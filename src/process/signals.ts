import fs from 'node:fs';
import os from 'node:os';

/**
 * Whether process `pid` has a handler for `signal` (Linux: the SigCgt mask in /proc/<pid>/status);
 * null where that cannot be known (another system, no such process). A signal whose default is to
 * terminate kills a process that has not installed its handler yet, so a sender can wait for it.
 */
export function catchesSignal(
  pid: number,
  signal: NodeJS.Signals,
  read = (f: string) => fs.readFileSync(f, 'utf8'),
): boolean | null {
  const number = os.constants.signals[signal];
  let status: string;
  try {
    status = read(`/proc/${pid}/status`);
  } catch {
    return null;
  }
  return caughtIn(status, number);
}

/** Pure: does the SigCgt line of a /proc status text have `signal`'s bit set? null: no such line. */
export function caughtIn(status: string, signal: number): boolean | null {
  const mask = /^SigCgt:\s*([0-9a-f]+)$/im.exec(status)?.[1];
  if (mask === undefined) return null;
  return ((BigInt(`0x${mask}`) >> BigInt(signal - 1)) & 1n) === 1n;
}
