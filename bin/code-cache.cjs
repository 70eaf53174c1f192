'use strict';
// V8's code cache for the bundle's chunks (dist/cli/*.cjs). Node compiles every chunk from source
// on each command, and each function again as it first runs: for a scout run that is ~0.9 MB of
// code and ~50 ms of its start (bench/scout-overhead.bench.ts: 196 → 143 ms over plain
// `claude -p` on node 20). The first command to load a chunk saves what V8 compiled of it, as the
// process exits, in `.v8-cache/` next to dist/; the next ones start from that.
//
// Why this is safe to trust: the cache sits inside agentbox's own package, which already holds
// the code it caches (whoever can write one can write the other), and a file owned by someone else
// or writable by anyone else is not read. Each cache file is named for the chunk's size, mtime and
// inode and node's version, and V8 refuses data made by another V8 or flags: such a chunk is
// compiled from source and saved again. Nothing is cached when the folder cannot be written.
// AGENTBOX_CODE_CACHE=0 turns it off.
//
// Why not node's own compile cache (`module.enableCompileCache`, node ≥ 22.8), on any line: it
// saves a file's code as the file is compiled, top-level only, so the functions a command runs are
// compiled again each time: of a scout run's CPU it saved 29 ms on node 22 and 44 on node 24, this
// one 79 and 59 (docs/benchmarks.md). And it reads whatever its folder holds.
//
// Why not the `v8-compile-cache` package: it caches every module in a folder under /tmp (a shared
// place), and measured slower than none for `agentbox status` (its own loading).
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

/** The process's main module (bin/agentbox.cjs), as `require.main` reads in every module. */
const mainModule = require.main;

/** Installs the cache for the .cjs files in `dist` (an absolute folder), kept in `cacheDir`. */
function installCodeCache(dist, cacheDir) {
  const fresh = [];
  const prefix = dist.endsWith(path.sep) ? dist : dist + path.sep;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    // NOTE: a script compiled here has no import() (node 20 gives it one only behind a flag): a
    // chunk that mentions one is left to node (the build turns them into require()).
    if (!filename.startsWith(prefix) || !filename.endsWith('.cjs') || content.includes('import(')) {
      return compile.call(this, content, filename);
    }
    const file = path.join(cacheDir, cacheName(filename));
    const cachedData = readTrusted(file);
    const script = new vm.Script(Module.wrap(content), { filename, cachedData });
    if (!cachedData || script.cachedDataRejected) fresh.push({ script, file });
    const run = script.runInThisContext({ displayErrors: true });
    const require = (id) => this.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, this, false, options);
    require.cache = Module._cache;
    require.main = mainModule;
    return run.call(this.exports, this.exports, require, this, filename, path.dirname(filename));
  };
  process.once('exit', () => save(fresh, cacheDir));
}

/**
 * The cache file of a chunk: its name, size, mtime and inode (NOTE: V8 checks cached data against
 * the source's length only, so a chunk rewritten at the same length must not find the old data),
 * and node's version and architecture.
 */
function cacheName(filename) {
  const stat = fs.statSync(filename, { bigint: true });
  const made = `${stat.size}-${stat.mtimeNs}-${stat.ino}`;
  return `${path.basename(filename)}.${made}.${process.version}.${process.arch}.bin`;
}

/** The file's bytes when this user owns it and nobody else may write it; else undefined. */
function readTrusted(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const stat = fs.fstatSync(fd);
    const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid();
    if (!mine || (stat.mode & 0o022) !== 0 || !stat.isFile()) return undefined;
    return fs.readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** What V8 compiled of each new chunk, written whole (a temp file, then a rename), best effort. */
function save(fresh, cacheDir) {
  if (fresh.length === 0) return;
  try {
    fs.mkdirSync(cacheDir, { recursive: true, mode: 0o755 });
  } catch {
    return;
  }
  for (const { script, file } of fresh) {
    const temp = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temp, script.createCachedData(), { mode: 0o644 });
      fs.renameSync(temp, file);
    } catch {
      try {
        fs.rmSync(temp, { force: true });
      } catch {
        // Nothing could be written there either.
      }
    }
  }
}

module.exports = { installCodeCache };
