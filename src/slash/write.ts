import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { RUN_ID_RE } from '../ledger/names.js';
import { mkdirp, refuseWriteOut, writeScratchSync } from '../util/fs.js';
import { assertRunId, commandDirName, type RunCommandsSpec, renderRunCommands } from './render.js';

const COMMAND_DIR_RE = /^run_([0-9a-f]{6})$/;

/** `<launchDir>/.claude/commands`: Claude Code reads commands from the launch directory. */
export const commandsRoot = (launchDir: string): string => path.join(launchDir, '.claude', 'commands');

/** `<launchDir>/.claude/commands/run_<id>`, for a checked id only. */
export function runCommandsDir(launchDir: string, runId: string): string {
  assertRunId(runId);
  return path.join(commandsRoot(launchDir), commandDirName(runId));
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return null;
    throw fsError(error, 'read', file);
  }
}

function remove(file: string): void {
  try {
    // On a symlink this removes the link, never what it points to.
    fs.rmSync(file, { recursive: true, force: true });
  } catch (error) {
    throw fsError(error, 'remove', file);
  }
}

/**
 * Writes the run's commands into `<launchDir>/.claude/commands/run_<id>/`, each file atomically,
 * and removes whatever else is in that folder: a resume regenerates the same set. Returns the
 * folder and the written files (absolute paths).
 */
export function writeRunCommands(launchDir: string, spec: RunCommandsSpec): { dir: string; files: string[] } {
  const rendered = renderRunCommands(spec);
  const dir = runCommandsDir(launchDir, spec.runId);
  // A file or a symlink in the folder's place (an agent can make one in its worktree) is replaced,
  // never written through.
  const stat = lstatOrNull(dir);
  if (stat && !stat.isDirectory()) remove(dir);
  // A folder on the way that is a link out (a cloned repository's `.claude -> <elsewhere>`, or the
  // agent's in its worktree) is refused: nothing of a run is written out of its launch folder.
  refuseWriteOut(dir, launchDir);
  mkdirp(dir);
  const files = rendered.map((command) => {
    const file = path.join(dir, command.file);
    // Scratch: a resume writes them again (see above).
    writeScratchSync(file, command.content);
    return file;
  });
  const wanted = new Set(rendered.map((c) => c.file));
  for (const entry of readdir(dir)) {
    if (!wanted.has(entry)) remove(path.join(dir, entry));
  }
  return { dir, files };
}

/** Removes the run's folder; true when there was one. The parent folders stay. */
export function removeRunCommands(launchDir: string, runId: string): boolean {
  const dir = runCommandsDir(launchDir, runId);
  if (!lstatOrNull(dir)) return false;
  remove(dir);
  return true;
}

/**
 * Run ids that have an entry in `<launchDir>/.claude/commands/`, sorted, for garbage collection.
 * A file or link with a run folder's name counts too, so that GC removes it.
 */
export function listRunCommandDirs(launchDir: string): string[] {
  return readdir(commandsRoot(launchDir))
    .map((entry) => COMMAND_DIR_RE.exec(entry)?.[1])
    .filter((id): id is string => id !== undefined && RUN_ID_RE.test(id))
    .sort();
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return [];
    throw fsError(error, 'list', dir);
  }
}
