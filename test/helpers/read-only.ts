import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Makes a folder unwritable and returns the undo. Root ignores permission bits, so as root the
 * folder gets the immutable attribute instead (chattr +i), which stops root too.
 */
export function makeReadOnly(dir: string): () => void {
  if (process.getuid?.() === 0) {
    execFileSync('chattr', ['+i', dir]);
    return () => execFileSync('chattr', ['-i', dir]);
  }
  const mode = fs.statSync(dir).mode;
  fs.chmodSync(dir, 0o555);
  return () => fs.chmodSync(dir, mode);
}
