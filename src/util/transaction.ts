import fs from 'node:fs';
import path from 'node:path';
import { fsError } from '../errors.js';
import { writeAtomicSync } from './fs.js';

type Undo = () => void;

/**
 * A handful of file writes that either all happen or leave the disk as it was. Each step records
 * how to undo itself; `rollback` undoes in reverse order. Used by init and uninstall, where a
 * failure half way (read-only folder, full disk) must not leave a half-installed repository.
 */
export class FileTransaction {
  private readonly undo: Undo[] = [];
  readonly changed: string[] = [];

  mkdir(dir: string): void {
    const missing: string[] = [];
    for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
    for (const d of missing) {
      try {
        fs.mkdirSync(d);
      } catch (error) {
        throw fsError(error, 'create the folder', d);
      }
      this.undo.push(() => fs.rmdirSync(d));
      this.changed.push(d);
    }
  }

  /** Writes atomically, so a reader never sees half a file; undone by putting the old bytes back. */
  write(file: string, content: string): void {
    const before = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
    if (before?.toString('utf8') === content) return;
    this.mkdir(path.dirname(file));
    writeAtomicSync(file, content);
    this.undo.push(() =>
      before === undefined ? fs.rmSync(file, { force: true }) : writeAtomicSync(file, before),
    );
    this.changed.push(file);
  }

  remove(file: string): void {
    if (!fs.existsSync(file)) return;
    const before = fs.readFileSync(file);
    try {
      fs.rmSync(file);
    } catch (error) {
      throw fsError(error, 'delete', file);
    }
    this.undo.push(() => writeAtomicSync(file, before));
    this.changed.push(file);
  }

  /** Removes a folder only if it is empty; returns whether it did. */
  removeEmptyDir(dir: string): boolean {
    if (!fs.existsSync(dir) || fs.readdirSync(dir).length > 0) return false;
    try {
      fs.rmdirSync(dir);
    } catch (error) {
      throw fsError(error, 'delete the folder', dir);
    }
    this.undo.push(() => fs.mkdirSync(dir));
    this.changed.push(dir);
    return true;
  }

  /** Undoes every step, newest first, and keeps going past failures (reporting the first). */
  rollback(): void {
    let first: unknown;
    for (const step of this.undo.reverse()) {
      try {
        step();
      } catch (error) {
        first ??= error;
      }
    }
    this.undo.length = 0;
    if (first) throw first;
  }

  /** Runs `work`; on any error rolls back and rethrows the original error. */
  static run<T>(work: (tx: FileTransaction) => T): T {
    const tx = new FileTransaction();
    try {
      return work(tx);
    } catch (error) {
      try {
        tx.rollback();
      } catch {
        // The original error is the one the user needs; the rollback failure is secondary.
      }
      throw error;
    }
  }
}
