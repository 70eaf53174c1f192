import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { writeAtomic } from '../util/fs.js';
import { groupDir } from './store.js';
import { PATCHES_DIR } from './types.js';

/** `.agents/groups/<group>/patches/agent_<k>.patch`: attempt k's patch, kept after merge, discard and gc. */
export function attemptPatchPath(ledger: Ledger, group: string, attempt: number): string {
  // The names come from meta.yaml and state.json, which a fetched group brings: never a path.
  if (!isRunName(group) || !Number.isInteger(attempt) || attempt < 1) {
    throw new AgentboxError('USAGE', `no patch path for group ${JSON.stringify(group)} attempt ${attempt}`, {
      hint: 'a group is named YY-MM-DD_HHmm__slug__<id> and its attempts are numbered from 1',
    });
  }
  return path.join(groupDir(ledger, group), PATCHES_DIR, `agent_${attempt}.patch`);
}

/** The run's changes.patch when it is a regular file (a link is never followed); null when absent. */
function readRunPatch(runDir: string): Buffer | null {
  const file = path.join(runDir, 'changes.patch');
  try {
    if (!fs.lstatSync(file).isFile()) return null;
    return fs.readFileSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw fsError(error, 'read', file);
  }
}

/**
 * Copies attempt k's changes.patch into its group's folder, where it stays when the run's worktree,
 * branch and folder are gone (`patches/agent_<k>.patch`, seed 002's multi-agent patches). The
 * runner calls it when an attempt ends (again when a resumed attempt ends again: the last end
 * wins); merge and discard call it for attempts that have none yet. An attempt that changed
 * nothing gets an empty file, so the folder holds one patch per attempt that ran. Returns the path.
 */
export async function keepAttemptPatch(
  ledger: Ledger,
  group: string,
  attempt: number,
  runDir: string,
): Promise<string> {
  const target = attemptPatchPath(ledger, group, attempt);
  const patch = readRunPatch(runDir) ?? Buffer.alloc(0);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // A folder that is a link (a ledger a cloned repository brought) would take the patch elsewhere.
  for (const dir of [groupDir(ledger, group), path.dirname(target)]) {
    if (!fs.lstatSync(dir).isDirectory()) {
      throw new AgentboxError('RUN_CORRUPT', `${dir} is not a folder (a link?): no patch is written there`, {
        hint: 'remove it and run the command again',
      });
    }
  }
  await writeAtomic(target, patch);
  return target;
}

/** keepAttemptPatch for an attempt whose patch is not kept yet; null when it was (untouched). */
/**
 * Attempt k's patch as its run has it now (a revision after the attempt ended changed it: the last
 * end wins), or, with no patch in its run folder (gone, or never made), the one kept before.
 */
export async function keepLatestPatch(
  ledger: Ledger,
  group: string,
  attempt: number,
  runDir: string,
): Promise<string | null> {
  if (readRunPatch(runDir) !== null) return keepAttemptPatch(ledger, group, attempt, runDir);
  return keepMissingPatch(ledger, group, attempt, runDir);
}

export async function keepMissingPatch(
  ledger: Ledger,
  group: string,
  attempt: number,
  runDir: string,
): Promise<string | null> {
  if (fs.existsSync(attemptPatchPath(ledger, group, attempt))) return null;
  return keepAttemptPatch(ledger, group, attempt, runDir);
}
