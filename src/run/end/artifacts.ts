import fs from 'node:fs';
import path from 'node:path';
import { EventLog } from '../../ledger/events.js';
import { openOwn } from '../../util/read-own.js';

/**
 * A fix run's own folder for notes and evidence, inside its worktree (the agent may write there,
 * and nowhere in the main repository). Left out of changes.patch; filed into the run's ledger
 * folder as `artifacts/` when the run ends.
 */
export const AGENT_RUN_DIR = '.agentbox-run';

/** The RUN_DIR the agent is told about: its artifact folder in a fix run, the ledger folder otherwise. */
export function agentRunDir(worktree: string | null, ledgerRunDir: string): string {
  return worktree ? path.join(worktree, AGENT_RUN_DIR) : ledgerRunDir;
}

/** What is kept of the artifact folder at most: the ledger lists 500 files of a run (listArtifacts). */
export const MAX_ARTIFACT_FILES = 500;
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;
/** Entries looked at, at most: a folder of a million makes the run's end no slower than this. */
const MAX_ENTRIES = 10_000;

/** What was not copied, and why (the agent's names: shown escaped where shown). */
export interface SkippedArtifact {
  readonly path: string;
  readonly why: string;
}

/**
 * Copies what the agent left in its artifact folder into `<run>/artifacts/`: regular files only,
 * never through a link (the folder itself may be one), at most MAX_ARTIFACT_FILES files and
 * MAX_ARTIFACT_BYTES in all. Anything else is skipped and returned with why: a link, a FIFO or a
 * socket there made the copy throw, and the run could not be recorded at all; a sparse file of
 * 50 GB took no room in the worktree and all of it here.
 */
export function collectArtifacts(
  worktree: string | null,
  ledgerRunDir: string,
): { files: string[]; skipped: SkippedArtifact[] } {
  const files: string[] = [];
  const skipped: SkippedArtifact[] = [];
  if (!worktree) return { files, skipped };
  const from = path.join(worktree, AGENT_RUN_DIR);
  const top = lstatOrNull(from);
  if (!top) return { files, skipped };
  if (!top.isDirectory())
    return { files, skipped: [{ path: AGENT_RUN_DIR, why: `${kindOf(top)}, not a folder` }] };
  let bytes = 0;
  let seen = 0;
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(from, rel), { withFileTypes: true });
    } catch (error) {
      skipped.push({ path: rel || '.', why: `not readable (${errnoOf(error)})` });
      return;
    }
    // In name order: which files the bounds keep does not depend on the file system's order.
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (++seen > MAX_ENTRIES) {
        skipped.push({ path: relPath, why: `past ${MAX_ENTRIES} entries` });
        return;
      }
      if (entry.isDirectory()) {
        walk(relPath);
        continue;
      }
      const sofar = { files: files.length, bytes };
      const copied = copyRegular(
        path.join(from, relPath),
        path.join(ledgerRunDir, 'artifacts', relPath),
        sofar,
      );
      if (typeof copied === 'string') skipped.push({ path: relPath, why: copied });
      else {
        files.push(`artifacts/${relPath}`);
        bytes += copied;
      }
    }
  };
  walk('');
  return { files, skipped };
}

/**
 * collectArtifacts at a run's end: what was skipped is logged (`artifact_skipped`, with why: the
 * first 20, then how many more). Returns the files copied.
 */
export function fileArtifacts(worktree: string | null, ledgerRunDir: string): string[] {
  const { files, skipped } = collectArtifacts(worktree, ledgerRunDir);
  const log = new EventLog(ledgerRunDir);
  for (const s of skipped.slice(0, 20)) log.append({ event: 'artifact_skipped', path: s.path, why: s.why });
  if (skipped.length > 20) log.append({ event: 'artifact_skipped', more: skipped.length - 20 });
  return files;
}

/**
 * Copies `src` to `dst` when it is a regular file within the bounds (opened as a file of its own:
 * openOwn, never through a link, never waiting on a FIFO); returns its size, or why not.
 */
function copyRegular(src: string, dst: string, sofar: { files: number; bytes: number }): number | string {
  let fd: number;
  try {
    fd = openOwn(src);
  } catch (error) {
    const stat = lstatOrNull(src);
    if (!stat) return 'gone';
    return stat.isFile() ? `not readable (${errnoOf(error)})` : `${kindOf(stat)}, not a file`;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (sofar.files >= MAX_ARTIFACT_FILES) return `past ${MAX_ARTIFACT_FILES} files`;
    if (sofar.bytes + stat.size > MAX_ARTIFACT_BYTES) return `past ${MAX_ARTIFACT_BYTES} bytes in all`;
    return copyFrom(fd, dst) ?? stat.size;
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes what `fd` holds to `dst` (never through a link there); why not, if it could not. */
function copyFrom(fd: number, dst: string): string | undefined {
  const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = fs.constants;
  try {
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    const out = fs.openSync(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644);
    try {
      const buffer = Buffer.allocUnsafe(1 << 20);
      for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
        fs.writeSync(out, buffer, 0, n);
    } finally {
      fs.closeSync(out);
    }
    return undefined;
  } catch (error) {
    return `not copied (${errnoOf(error)})`;
  }
}

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** What a file system entry is, in words. Pure. */
function kindOf(stat: fs.Stats): string {
  if (stat.isSymbolicLink()) return 'a link';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFile()) return 'a file';
  return 'a device';
}

const errnoOf = (error: unknown): string =>
  (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);
