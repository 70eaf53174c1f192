import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's `src/`, for tests that read the code's shape. */
export const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** Every `.ts` file under `dir`, as full paths. */
export function sources(dir: string = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}
