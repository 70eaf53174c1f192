import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/bin.js';
import { tempDir } from '../helpers/git-repo.js';
import { othersFile } from '../helpers/unprivileged.js';

/*
 * bin/code-cache.cjs in processes of their own (it patches node's module loader): two chunks that
 * require each other, loaded through the cache, whatever state its files are in.
 */

const CODE_CACHE = path.join(REPO_ROOT, 'bin', 'code-cache.cjs');

function chunks(value: string) {
  const dist = tempDir();
  // import() as the bundle's chunks use it (node-pty, node:child_process): through node's loader.
  fs.writeFileSync(
    path.join(dist, 'a.cjs'),
    `'use strict';\nmodule.exports = { value: require('./b.cjs').value + '!', file: __filename, later: () => require('./c.cjs') };\n`,
  );
  // import() cannot run in a script compiled with cached data: such a chunk is left to node.
  fs.writeFileSync(path.join(dist, 'c.cjs'), `'use strict';\nmodule.exports = import('node:path');\n`);
  fs.writeFileSync(path.join(dist, 'b.cjs'), `'use strict';\nexports.value = ${JSON.stringify(value)};\n`);
  return { dist, cache: path.join(tempDir(), 'v8') };
}

/** Loads a.cjs through the cache in a new node process; what it exported. */
function load(dist: string, cache: string): { value: string; file: string; sep: string } {
  const script = `require(${JSON.stringify(CODE_CACHE)}).installCodeCache(${JSON.stringify(dist)}, ${JSON.stringify(cache)});
const a = require(${JSON.stringify(path.join(dist, 'a.cjs'))});
a.later().then((p) => process.stdout.write(JSON.stringify({ value: a.value, file: a.file, sep: p.sep })));`;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout);
}

/** load(), with V8 saying on stdout what it did with each cached data it was given. */
function loadProfiled(dist: string, cache: string): string {
  const script = `require(${JSON.stringify(CODE_CACHE)}).installCodeCache(${JSON.stringify(dist)}, ${JSON.stringify(cache)});
process.stdout.write(require(${JSON.stringify(path.join(dist, 'a.cjs'))}).value + '\\n');`;
  const result = spawnSync(process.execPath, ['--profile-deserialization', '-e', script], {
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  expect(result.stdout).toContain('hello!\n');
  return result.stdout;
}

/** The cache file of `chunk` as it is now (named for its size, mtime and inode). */
function cacheOf(cache: string, chunk: string): string {
  const files = fs.readdirSync(cache).filter((name) => name.startsWith(`${chunk}.`) && name.endsWith('.bin'));
  const newest = files.sort(
    (a, b) => fs.statSync(path.join(cache, b)).mtimeMs - fs.statSync(path.join(cache, a)).mtimeMs,
  );
  expect(newest.length).toBeGreaterThan(0);
  return path.join(cache, newest[0]!);
}
/** A file's identity and content: a rewrite (temp file, rename) changes the inode. */
const version = (file: string) => `${fs.statSync(file).ino}:${fs.readFileSync(file).toString('base64')}`;

describe('the code cache of the bundle', () => {
  it('saves each chunk as the first process exits, and the next one starts from it unchanged', () => {
    const { dist, cache } = chunks('hello');
    expect(load(dist, cache)).toEqual({ value: 'hello!', file: path.join(dist, 'a.cjs'), sep: '/' });
    const saved = ['a.cjs', 'b.cjs'].map((chunk) => version(cacheOf(cache, chunk)));
    expect(fs.statSync(cacheOf(cache, 'a.cjs')).mode & 0o777).toBe(0o644);
    expect(load(dist, cache)).toEqual({ value: 'hello!', file: path.join(dist, 'a.cjs'), sep: '/' });
    // Accepted by V8: not written again.
    expect(['a.cjs', 'b.cjs'].map((chunk) => version(cacheOf(cache, chunk)))).toEqual(saved);
  });

  it('a chunk whose source changed, or a damaged file, is compiled from source and saved again', () => {
    const { dist, cache } = chunks('hello');
    load(dist, cache);
    const before = version(cacheOf(cache, 'b.cjs'));
    // The same length: V8 alone would take the old data for it.
    fs.writeFileSync(path.join(dist, 'b.cjs'), `'use strict';\nexports.value = "HELLO";\n`);
    expect(load(dist, cache).value).toBe('HELLO!');
    expect(version(cacheOf(cache, 'b.cjs'))).not.toBe(before);
    fs.writeFileSync(cacheOf(cache, 'a.cjs'), 'not a code cache');
    expect(load(dist, cache).value).toBe('HELLO!');
    expect(fs.readFileSync(cacheOf(cache, 'a.cjs'), 'utf8')).not.toBe('not a code cache');
  });

  it('never reads a file others may write: it is compiled from source and replaced', () => {
    const { dist, cache } = chunks('hello');
    load(dist, cache);
    const file = cacheOf(cache, 'a.cjs');
    const before = version(file);
    fs.chmodSync(file, 0o666);
    expect(load(dist, cache).value).toBe('hello!');
    expect(version(file)).not.toBe(before);
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
  });

  it('nor through a symlink to such a file, nor a file of another user', () => {
    const { dist, cache } = chunks('hello');
    load(dist, cache);
    const file = cacheOf(cache, 'a.cjs');
    // A link in the cache folder to a copy anyone may write: the target is what counts.
    const shared = path.join(tempDir(), 'shared.bin');
    fs.copyFileSync(file, shared);
    fs.chmodSync(shared, 0o666);
    fs.rmSync(file);
    fs.symlinkSync(shared, file);
    expect(load(dist, cache).value).toBe('hello!');
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(false);
    if (process.getuid?.() === 0) {
      // Root gives the cache file away. Its data is this chunk's, which V8 would take (and the
      // file then stay as it is): a file that is replaced was not read.
      const before = version(file);
      fs.chownSync(file, 12345, 12345);
      expect(load(dist, cache).value).toBe('hello!');
      expect(version(file)).not.toBe(before);
      expect(fs.statSync(file).uid).toBe(0);
      return;
    }
    // NOTE: a user can neither give a file away nor write one of another user's, so the cache
    // file becomes a link to a file of root's that only its owner makes untrusted (a plain file,
    // mode 644); that it is not read is seen with V8's --profile-deserialization, which prints
    // "[Cached code failed check]" for cached data it was given and rejected — as it does for the
    // same bytes in a file of the user's own.
    const others = othersFile();
    fs.rmSync(file);
    fs.symlinkSync(others, file);
    expect(loadProfiled(dist, cache)).not.toMatch(/\[Cached code failed check/);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(false);
    const own = path.join(tempDir(), 'own.bin');
    fs.copyFileSync(others, own);
    fs.chmodSync(own, 0o644);
    fs.rmSync(file);
    fs.symlinkSync(own, file);
    expect(loadProfiled(dist, cache)).toMatch(/\[Cached code failed check/);
  });

  it('leaves a chunk with import() to node: it runs, and is not cached', () => {
    const { dist, cache } = chunks('hello');
    expect(load(dist, cache).sep).toBe('/');
    expect(fs.readdirSync(cache).filter((name) => name.startsWith('c.cjs.'))).toEqual([]);
  });

  it('caches nothing it cannot write, and only the folder it was given', () => {
    const { dist, cache } = chunks('hello');
    fs.mkdirSync(path.dirname(cache), { recursive: true });
    fs.writeFileSync(cache, 'a file where the folder would go');
    expect(load(dist, cache).value).toBe('hello!');
    const other = chunks('other');
    const script = `require(${JSON.stringify(CODE_CACHE)}).installCodeCache(${JSON.stringify(other.dist)}, ${JSON.stringify(other.cache)});
require(${JSON.stringify(path.join(dist, 'a.cjs'))});`;
    expect(spawnSync(process.execPath, ['-e', script]).status).toBe(0);
    expect(fs.existsSync(other.cache)).toBe(false);
  });
});
