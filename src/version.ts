import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set by `npm run build` (scripts/bundle.mjs): the bundle does not read package.json at startup. */
declare const AGENTBOX_BUILD_VERSION: string | undefined;

/**
 * The package's version, from the nearest package.json above this module: src/version.ts and an
 * installed copy both find the package root that way.
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

export const VERSION: string =
  typeof AGENTBOX_BUILD_VERSION === 'string'
    ? AGENTBOX_BUILD_VERSION
    : packageVersion(fileURLToPath(import.meta.url));
