import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import writeFileAtomic from 'write-file-atomic';
import { errnoCode, fsError } from '../errors.js';

/*
 * The one way agentbox replaces a file: a temp file in the same folder, then a rename, so a
 * reader sees the old bytes or the new ones, never half (write-file-atomic; it also keeps the
 * replaced file's mode). Append-only logs and exclusive creates (`wx`) are written directly.
 */

/** Writes `file` atomically: readers see old or new, never half. */
export async function writeAtomic(file: string, data: string | Buffer, mode?: number): Promise<void> {
  try {
    await writeFileAtomic(file, data, mode === undefined ? {} : { mode });
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

/** writeAtomic for code that cannot wait (init's transaction, a queued message). */
export function writeAtomicSync(file: string, data: string | Buffer, mode?: number): void {
  try {
    writeFileAtomic.sync(file, data, mode === undefined ? {} : { mode });
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

/**
 * writeAtomicSync for a file that lives only while a run runs (its slash commands, its secrets):
 * readers still see the old bytes or the new ones, but nothing waits for the disk (no fsync):
 * after a crash the run is started again and writes them anew. On a busy disk the run's six such
 * flushes took 2-18 ms before claude could start.
 */
export function writeScratchSync(file: string, data: string | Buffer, mode?: number): void {
  try {
    writeFileAtomic.sync(file, data, mode === undefined ? { fsync: false } : { mode, fsync: false });
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

/**
 * Writes `file` whole only if nothing is there yet: the temp file is hard-linked into place, and
 * a link never replaces a name. false: the file exists (someone wrote it first; it is kept).
 */
export function createAtomicSync(file: string, data: string | Buffer): boolean {
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temp, data, { flag: 'wx' });
    fs.linkSync(temp, file);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw fsError(error, 'write', file);
  } finally {
    rmQuietly(temp);
  }
}

/** NOTE: `force` forgives only ENOENT; under a parent that is not a folder rmSync throws ENOTDIR. */
function rmQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Nothing could have been made there.
  }
}

/** The file's text, or undefined when it does not exist. Other failures throw. */
export function readTextIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
    throw fsError(error, 'read', file);
  }
}

export function exists(file: string): boolean {
  return fs.existsSync(file);
}

export function mkdirp(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw fsError(error, 'create the folder', dir);
  }
}

/**
 * Fails early, before anything is written, when a folder cannot be written to. Root ignores
 * permission bits, so this asks the kernel (access(2)) rather than reading the mode.
 */
export function assertWritableDir(dir: string): void {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    throw fsError(error, 'write into', dir);
  }
}

/** A regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
