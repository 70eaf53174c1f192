import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { isRunName } from './names.js';
import type { Ledger } from './paths.js';
import { readState } from './state.js';

/**
 * `.agents/active/<run>`: an empty file for every run whose status is ACTIVE or STALLED (alive but
 * silent: its process may yet die), so the watchdog, which runs on every agentbox invocation,
 * reads a handful of entries instead of 10,000 state files. A marker is made before its run's
 * state says ACTIVE and removed after it says neither: such a run always has one; a marker left
 * without one is dropped by the watchdog.
 */
export function activeDir(ledger: Ledger): string {
  return path.join(ledger.dir, 'active');
}

export function markActive(ledger: Ledger, name: string): void {
  const file = path.join(activeDir(ledger), name);
  try {
    fs.writeFileSync(file, '');
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw fsError(error, 'write', file);
    fs.mkdirSync(activeDir(ledger), { recursive: true });
    fs.writeFileSync(file, '');
  }
}

export function unmarkActive(ledger: Ledger, name: string): void {
  fs.rmSync(path.join(activeDir(ledger), name), { force: true });
}

/**
 * The runs marked active. A ledger from before the markers existed (no `active/` folder, but runs)
 * is scanned once, and its markers written.
 */
export function activeRunNames(ledger: Ledger): string[] {
  try {
    return fs.readdirSync(activeDir(ledger)).filter(isRunName);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw fsError(error, 'list', activeDir(ledger));
  }
  let names: string[];
  try {
    names = fs.readdirSync(ledger.runsDir).filter(isRunName);
  } catch {
    return [];
  }
  // No runs, no markers needed (and an untouched ledger stays untouched).
  if (names.length === 0) return [];
  const active = names.filter((name) => {
    try {
      const status = readState(path.join(ledger.runsDir, name))?.status;
      return status === 'ACTIVE' || status === 'STALLED';
    } catch {
      return false;
    }
  });
  fs.mkdirSync(activeDir(ledger), { recursive: true });
  for (const name of active) markActive(ledger, name);
  return active;
}
