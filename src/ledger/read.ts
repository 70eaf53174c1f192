import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { closest } from '../util/suggest.js';
import { corruptFile } from './check.js';
import { POINTER_NAMES } from './links.js';
import { META_FILE, readMeta } from './meta.js';
import { isRunName, quoteRef, validateRunRef } from './names.js';
import type { Ledger } from './paths.js';
import { readState, STATE_FILE } from './state.js';
import type { RunMeta, RunState } from './types.js';

export interface RunDetails {
  readonly name: string;
  readonly dir: string;
  readonly meta: RunMeta;
  /** null: state.json does not exist (yet). */
  readonly state: RunState | null;
  /** Artifacts present, relative to `dir` with `/`: report.md, plan.md, raw/stream.jsonl … */
  readonly files: string[];
}

const MAX_FILES = 500;

/**
 * Files in a run folder other than the ledger's own (meta.yaml, state.json and its temp files):
 * regular files only. NOTE: a link is never an artifact — an agent can write one in artifacts/, and
 * a ledger that came from elsewhere can hold `report.md -> ~/.ssh/id_rsa`: what is listed is what
 * `show`, the page and `push` read, and none of them reads through a link.
 */
export function listArtifacts(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (out.length >= MAX_FILES) return;
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (!rel && (entry.name === META_FILE || entry.name.startsWith(STATE_FILE))) continue;
      if (entry.isDirectory()) walk(relPath);
      else if (entry.isFile()) out.push(relPath);
    }
  };
  walk('');
  return out;
}

export function notFound(ledger: Ledger, ref: string): AgentboxError {
  const group = groupNamed(ledger, ref);
  if (group) {
    return new AgentboxError(
      'RUN_NOT_FOUND',
      `${quoteRef(ref)} is a group of attempts (${group}), not a run`,
      {
        hint: `"agentbox show ${ref}" lists its attempts; name one by its own id`,
      },
    );
  }
  // A pointer mistyped (`lates`) is named; anything else lists the runs.
  const near = closest(ref, ['latest', ...POINTER_NAMES]);
  return new AgentboxError('RUN_NOT_FOUND', `no run named ${quoteRef(ref)} in ${ledger.runsDir}`, {
    hint: `${near ? `did you mean ${near}? ` : ''}run "agentbox status" to list runs`,
  });
}

/** The group folder (src/group/) `ref` names by id, id prefix or name, if any: for a clearer error. */
function groupNamed(ledger: Ledger, ref: string): string | undefined {
  const id = ref.toLowerCase();
  if (!/^[0-9a-f]{3,6}$/.test(id) && !/^\d\d-/.test(ref)) return undefined;
  try {
    return fs
      .readdirSync(path.join(ledger.dir, 'groups'))
      .find((name) => name === ref || name.slice(-6).startsWith(id) || name.startsWith(ref));
  } catch {
    return undefined;
  }
}

/** Everything on disk about one run, by its full name (see resolveRun for short ids and pointers). */
export function readRun(ledger: Ledger, name: string): RunDetails {
  validateRunRef(name);
  if (!isRunName(name)) throw notFound(ledger, name);
  const dir = path.join(ledger.runsDir, name);
  let files: string[];
  try {
    // A run folder that is a link leads anywhere (your home): not a run of this ledger.
    if (fs.lstatSync(dir).isSymbolicLink())
      throw new AgentboxError('RUN_CORRUPT', `${dir} is a symbolic link, not a run folder: it is not read`, {
        hint: `a ledger that came from elsewhere is not yours: look at it (ls -l ${dir}), then remove the link`,
      });
    files = listArtifacts(dir);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw notFound(ledger, name);
    throw fsError(error, 'list', dir);
  }
  const meta = readMeta(dir);
  if (!meta) throw corruptFile(path.join(dir, META_FILE), new Error('the file is missing'));
  return { name, dir, meta, state: readState(dir), files };
}

/** Sizes of `files` (from readRun) in bytes; a file that vanished meanwhile is left out. */
export function fileSizes(dir: string, files: readonly string[]): { path: string; bytes: number }[] {
  return files.flatMap((file) => {
    try {
      return [{ path: file, bytes: fs.statSync(path.join(dir, file)).size }];
    } catch {
      return [];
    }
  });
}
