// `npm run build`: the CLI as a few ES module files in dist/cli/ (esbuild), instead of the ~450
// files tsc would leave for node to find, open and link on every command (a scout run loaded 356
// ES modules plus yaml's CommonJS files). Commands are still loaded lazily: each dynamic import
// becomes its own chunk. Kept outside the bundle: node-pty (a native addon), the sandbox runtime
// (started as its own CLI by path) and playwright-core (tests only). The hook script in hooks/ is
// not bundled: it stays a tiny file of its own.
import fs from 'node:fs';
import { build } from 'esbuild';

fs.rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: { entry: 'src/cli/entry.ts', main: 'src/cli/main.ts' },
  outdir: 'dist/cli',
  entryNames: '[name]',
  // NOTE: chunks stay in dist/cli/: code finds bin/, hooks/, templates/ and web/ two folders up.
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // ESM builds first (jsonc-parser's UMD main requires its files at run time).
  mainFields: ['module', 'main'],
  external: ['node-pty', '@anthropic-ai/sandbox-runtime', 'playwright-core'],
  // Bundled CommonJS packages (commander, yaml, write-file-atomic) still call require and read
  // __filename: give every chunk the three.
  banner: {
    js: [
      "import { createRequire as __agentboxRequire } from 'node:module';",
      "import { fileURLToPath as __agentboxPath } from 'node:url';",
      "import { dirname as __agentboxDirname } from 'node:path';",
      'const require = __agentboxRequire(import.meta.url);',
      'const __filename = __agentboxPath(import.meta.url);',
      'const __dirname = __agentboxDirname(__filename);',
    ].join(' '),
  },
  legalComments: 'none',
  logLevel: 'warning',
});
