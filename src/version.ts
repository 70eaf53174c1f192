import { createRequire } from 'node:module';

// NOTE: dist/version.js and src/version.ts both sit one level below the package root.
const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

export const VERSION: string = pkg.version;
