import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { isRunName } from './names.js';
import type { Ledger } from './paths.js';
import type { RunStatus } from './types.js';

/** Semantic pointers kept in `.agents/pointers/`, each a symlink to a run folder. */
export const POINTER_NAMES = ['last-fail', 'last-done', 'last-review'] as const;
export type PointerName = (typeof POINTER_NAMES)[number];

const POINTER_RE = /^[a-z][a-z0-9-]{0,39}$/;

/** Which pointer follows a run entering `status`, if any. */
export function pointerForStatus(status: RunStatus): PointerName | null {
  switch (status) {
    case 'CRASHED':
    case 'STALLED':
    case 'ABORTED':
    case 'FAILED':
      return 'last-fail';
    case 'DONE':
      return 'last-done';
    case 'REVIEW':
      return 'last-review';
    default:
      return null;
  }
}

/**
 * Points the symlink `link` at `target` (relative) without a moment where it is missing: a new
 * link under a unique temp name, then rename(2) over the old one.
 */
function replaceSymlink(link: string, target: string): void {
  const temp = `${link}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.symlinkSync(target, temp);
    fs.renameSync(temp, link);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw fsError(error, 'update the link', link);
  }
}

export function setLatest(ledger: Ledger, runName: string): void {
  replaceSymlink(ledger.latest, path.join('runs', runName));
}

export function setPointer(ledger: Ledger, pointer: string, runName: string): void {
  if (!POINTER_RE.test(pointer)) throw new Error(`invalid pointer name ${JSON.stringify(pointer)}`);
  if (!isRunName(runName)) throw new Error(`invalid run name ${JSON.stringify(runName)}`);
  fs.mkdirSync(ledger.pointersDir, { recursive: true });
  replaceSymlink(path.join(ledger.pointersDir, pointer), path.join('..', 'runs', runName));
}

export function isPointerName(name: string): boolean {
  return POINTER_RE.test(name);
}

/**
 * The run a link names, or null when the link is missing or does not name a run. Whether that
 * run still exists is the caller's question (gc may have removed it).
 */
export function readLinkedRun(link: string): string | null {
  let target: string;
  try {
    target = fs.readlinkSync(link);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'EINVAL' || code === 'ENOTDIR') return null;
    throw fsError(error, 'read the link', link);
  }
  const name = path.basename(target);
  return isRunName(name) ? name : null;
}
