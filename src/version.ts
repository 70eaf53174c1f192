import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's version, from the nearest package.json above this module: src/version.ts, the
 * bundle's chunks in dist/cli/ and an installed copy all find the package root that way.
 */
function packageVersion(from: string): string {
  let dir = path.dirname(from);
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agentbox' && typeof pkg.version === 'string') return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return '0.0.0';
    dir = up;
  }
}

export const VERSION: string = packageVersion(fileURLToPath(import.meta.url));
