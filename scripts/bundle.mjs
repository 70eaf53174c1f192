// `npm run build`: the CLI as CommonJS chunks in dist/cli/ (rolldown), instead of the ~450 files
// tsc would leave for node to find, open and link on every command. Commands are still loaded
// lazily: each dynamic import becomes its own chunk. bin/agentbox.cjs requires main.cjs (and
// answers --version itself).
//
// Why rolldown and these groups: on node 20 every module a command loads costs ~0.3 ms (resolve,
// read, link), and ~25 ms per MB to compile (bench/status.bench.ts; docs/benchmarks.md). esbuild
// splits code shared by the lazily loaded commands into one chunk per combination of commands: 21
// modules for `agentbox status`. Rolldown's groups put what every command loads into one chunk
// (`core`: main's static imports, commander included) and what `status` needs into another
// (`read`): 5 modules. The rest is split automatically.
//
// Why CommonJS: node 20's ES module loader costs `agentbox status` ~7 ms more than require() for
// the same chunks (an ES entry alone ~4 ms; the ES face of node:fs loads fs streams, ~2 ms). The
// sources stay ES modules: `import.meta.url` becomes the chunk's own file URL, as it was.
//
// The web page (web/app.js and the modules it imports) is bundled too, into dist/web/app.js: one
// request instead of ~30 module requests, which the browser's six connections fetched in ~170 ms on
// the 10,000-call run page (bench/ui-transcript.bench.ts). The sources in web/ stay what a run from
// src/ (tsx) serves, module by module.
//
// Kept outside the bundle: node-pty (a native addon), the sandbox runtime (started as its own CLI
// by path) and playwright-core (tests only). The hook script in hooks/ is not bundled: it stays a
// tiny file of its own.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'rolldown';

const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));

/** A module of src/ whose path (without `.ts`) matches `re`. */
const src = (re) => new RegExp(`[\\\\/]src[\\\\/](?:${re})\\.ts$`);

/**
 * commander requires node:child_process at load time for a feature agentbox does not use
 * (executable subcommands); loading it costs ~2 ms on every command. Its require gets an object
 * that loads the module on first use instead.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  resolveId(id, importer) {
    if (/^(node:)?child_process$/.test(id) && /[\\/]node_modules[\\/]commander[\\/]/.test(importer ?? '')) {
      return '\0lazy-child-process';
    }
    return null;
  },
  load(id) {
    if (id !== '\0lazy-child-process') return null;
    // `require` is the CommonJS chunk's own.
    return "export default new Proxy({}, { get: (_, key) => require('node:child_process')[key] });\n";
  },
};

/**
 * `import fs from 'node:fs'` in a CommonJS chunk is `__toESM(require('node:fs'))`: a new object
 * with a getter for each of the module's ~100 names, made again in every chunk that imports it
 * (85 chunks import node:path, 70 node:fs), each call then going through a getter. The sources
 * take only the default of these modules (a named import fails the build): it becomes the module
 * itself, from one small module.
 */
const DEFAULT_ONLY = new Set(['fs', 'path', 'os']);
const SOURCES = `${path.resolve('src')}${path.sep}`;
const nodeDefaults = {
  name: 'node-defaults',
  resolveId(id, importer) {
    const name = /^node:([a-z]+)$/.exec(id)?.[1];
    // agentbox's own sources only: a dependency may take names (execa: `constants` of node:os).
    if (!name || !DEFAULT_ONLY.has(name) || !(importer ?? '').startsWith(SOURCES)) return null;
    return `\0node-default:${name}`;
  },
  load(id) {
    const name = /^\0node-default:([a-z]+)$/.exec(id)?.[1];
    // `require` is the CommonJS chunk's own.
    return name ? `export default require('node:${name}');\n` : null;
  },
};

/** What `import.meta.url` reads as in a chunk: the chunk's own file, as it was in an ES module. */
const MODULE_URL = '__agentboxModuleUrl';
const moduleUrl = {
  name: 'module-url',
  renderChunk(code) {
    if (!code.includes(MODULE_URL)) return null;
    // After the "use strict" directive, which must stay the first statement.
    const strict = /^(?:#!.*\n)?"use strict";\n/.exec(code)?.[0] ?? '';
    const url = `const ${MODULE_URL} = require('node:url').pathToFileURL(__filename).href;\n`;
    return `${strict}${url}${code.slice(strict.length)}`;
  },
};

fs.rmSync('dist', { recursive: true, force: true });
// V8's code cache of the chunks removed above (bin/code-cache.cjs).
fs.rmSync('.v8-cache', { recursive: true, force: true });
await build({
  input: { main: 'src/cli/main.ts' },
  platform: 'node',
  // node's own modules are external on platform 'node' (listing them here would skip the plugin).
  external: ['@lydell/node-pty', '@anthropic-ai/sandbox-runtime', 'playwright-core'],
  // ESM builds first (jsonc-parser's UMD main requires its files at run time).
  resolve: { mainFields: ['module', 'main'] },
  // src/version.ts reads package.json only when this is not set (tsx, the tests' src runs).
  transform: {
    define: {
      AGENTBOX_BUILD_VERSION: JSON.stringify(version),
      AGENTBOX_WEB_BUNDLE: 'true',
      'import.meta.url': MODULE_URL,
    },
  },
  plugins: [lazyChildProcess, nodeDefaults, moduleUrl],
  output: {
    // NOTE: chunks stay in dist/cli/: code finds bin/, hooks/, templates/ and web/ two folders up.
    dir: 'dist/cli',
    format: 'cjs',
    // import() of what stays outside the bundle (node-pty, node:child_process) becomes require():
    // a chunk compiled from V8's code cache (bin/code-cache.cjs) has no import() of its own.
    dynamicImportInCjs: false,
    // No JSDoc: less to compile, and none of its `import("…")` types for bin/code-cache.cjs to see.
    comments: { legal: true, annotation: true, jsdoc: false },
    // The sources are ES modules, strict by definition: so is every chunk.
    strict: true,
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    codeSplitting: {
      groups: [
        // The entry itself stays out: it is what bin/agentbox.cjs requires, and nothing else.
        {
          name: 'core',
          tags: ['$initial'],
          test: (id) => !/[\\/]src[\\/]cli[\\/]main\.ts$/.test(id),
          priority: 2,
        },
        {
          name: 'read',
          test: src(
            'ledger/(list|paths|index-log|meta|check|state|text|names|types|cache|fold-cache|names-cache)|util/(columns|style|number)|budget/format|git/repo',
          ),
          priority: 1,
        },
      ],
    },
  },
});

// The resident agentbox's client (src/resident/client.ts): bin/agentbox.cjs loads it first for the
// commands `agentbox serve` runs, so it is a file of its own, none of the CLI's chunks in it.
await build({
  input: { client: 'src/resident/client.ts' },
  platform: 'node',
  transform: { define: { AGENTBOX_BUILD_VERSION: JSON.stringify(version), 'import.meta.url': MODULE_URL } },
  plugins: [nodeDefaults, moduleUrl],
  output: {
    dir: 'dist/resident',
    format: 'cjs',
    entryFileNames: '[name].cjs',
    codeSplitting: false,
    strict: true,
  },
});

// The page: one ES module, not minified (a person reading an error in the browser's console reads
// the sources' names). diff2html is not in it: the page loads that from its package when a diff is
// first drawn.
await build({
  input: { app: 'web/app.js' },
  platform: 'browser',
  output: { dir: 'dist/web', format: 'esm', entryFileNames: '[name].js', codeSplitting: false },
});

// bin/code-cache.cjs leaves a chunk that mentions import() to node (no code cache for it): say so.
for (const name of fs.readdirSync('dist/cli')) {
  if (fs.readFileSync(`dist/cli/${name}`, 'utf8').includes('import(')) {
    console.warn(`bundle: dist/cli/${name} mentions import(): it will not use V8's code cache`);
  }
}
