import fs from 'node:fs';
import writeFileAtomic from 'write-file-atomic';
import { errnoCode, fsError } from '../errors.js';

/** Writes a file through a temp file in the same folder and a rename: readers see old or new, never half. */
export async function writeAtomic(file: string, data: string | Buffer, mode?: number): Promise<void> {
  try {
    await writeFileAtomic(file, data, mode === undefined ? {} : { mode });
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

export function writeAtomicSync(file: string, data: string): void {
  try {
    writeFileAtomic.sync(file, data);
  } catch (error) {
    throw fsError(error, 'write', file);
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
