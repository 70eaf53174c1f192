import fs from 'node:fs';
import path from 'node:path';

/** A run's slash-command folder in `.claude/commands/`: `run_<run id>`. */
export const COMMAND_DIR_RE = /^run_([0-9a-f]{6})$/;

/**
 * The folder around `cwd` whose `.agents` might be a ledger, without running git: the nearest one
 * up from `cwd` that holds both `.git` and `.agents` (a file or folder). Null: none.
 */
export function findLedgerFolder(cwd: string): string | null {
  let dir = path.resolve(cwd);
  for (;;) {
    if (fs.existsSync(path.join(dir, '.git'))) return fs.existsSync(path.join(dir, '.agents')) ? dir : null;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The ledger around `cwd` without running git (this runs before every command): the nearest folder
 * up from `cwd` that holds both `.git` and `.agents/runs`. Null: none, and nothing to watch.
 */
export function findLedgerRoot(cwd: string): string | null {
  let dir = path.resolve(cwd);
  for (;;) {
    if (fs.existsSync(path.join(dir, '.agents', 'runs')) && fs.existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Whether the watchdog has anything to look at, in two readdirs: a marker in `.agents/active/` (or
 * no such folder yet: a ledger from before markers, which the watchdog migrates), or a run's slash
 * commands. NOTE: false means the watchdog module is not even loaded (~7 ms on every command).
 */
export function watchdogHasWork(root: string): boolean {
  let markers: string[];
  try {
    markers = fs.readdirSync(path.join(root, '.agents', 'active'));
  } catch {
    return true;
  }
  if (markers.length > 0) return true;
  try {
    return fs.readdirSync(path.join(root, '.claude', 'commands')).some((entry) => COMMAND_DIR_RE.test(entry));
  } catch {
    return false;
  }
}
