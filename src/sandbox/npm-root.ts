import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import which from 'which';
import { writeAtomic, writeScratchSync } from '../util/fs.js';

/*
 * Every sandboxed Claude Code start (2.1.330) runs `/bin/sh -c "npm root -g"` (cwd `/`, claude's
 * environment, 5 s timeout) before its first request: the sandbox runtime looks for its Java proxy
 * agent (`srt-proxy-agent.jar`) under the global node_modules. npm's own start makes that 0.3 s of
 * every run's critical path, and no setting reaches it (docs/benchmarks.md). So the answer npm
 * gives is kept, keyed by everything it depends on, and claude finds an `npm` first on its PATH
 * that prints exactly that answer to exactly `npm root -g` and hands every other call to the real
 * npm. The shim's folder lies in the run's private area, which the sandbox denies: the agent's
 * commands never see it and run the real npm (test/e2e/npm-root.test.ts).
 */

/** The cache file, in agentbox's state dir (denied to every run). */
export const NPM_ROOT_CACHE = 'npm-root.json';
const SCHEMA_VERSION = 1;

/** A file's identity for the key: size, mtime and inode, or absent. */
function stamp(file: string): string {
  try {
    const s = fs.statSync(file, { bigint: true });
    return `${s.size}-${s.mtimeNs}-${s.ino}`;
  } catch {
    return '-';
  }
}

/** `name` as `sh` finds it on `PATH` from `/` (claude's call runs there), or null. */
function onPath(name: string, env: Record<string, string>): string | null {
  if (!env.PATH) return null;
  const dirs = env.PATH.split(path.delimiter).map((d) => path.resolve('/', d || '.'));
  return which.sync(name, { nothrow: true, path: dirs.join(path.delimiter) });
}

function realOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * What `npm root -g` answers from, as @npmcli/config reads it (npm 7–11): the npm and the node it
 * runs on (npm's `#!/usr/bin/env node`), the environment (PREFIX, DESTDIR, every npm_config_*),
 * and the npmrc files: npm's builtin one, the global one under the default prefix, the person's
 * (userconfig) and the project's at `/`. null: no npm on PATH (claude's call fails fast then).
 */
export function npmRootKey(env: Record<string, string>): { key: string; npm: string } | null {
  const npm = onPath('npm', env);
  if (!npm) return null;
  const npmFile = realOr(npm);
  const node = onPath('node', env);
  const nodeFile = node ? realOr(node) : null;
  const vars = Object.entries(env)
    .filter(([name]) => /^(npm_|PREFIX$|DESTDIR$|HOME$|PATH$)/i.test(name))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const userconfig =
    env.npm_config_userconfig ?? env.NPM_CONFIG_USERCONFIG ?? path.join(env.HOME ?? '/', '.npmrc');
  const files = [
    npmFile,
    path.join(path.dirname(path.dirname(npmFile)), 'npmrc'),
    ...(nodeFile ? [nodeFile, path.join(path.dirname(path.dirname(nodeFile)), 'etc', 'npmrc')] : []),
    ...(env.PREFIX ? [path.join(env.PREFIX, 'etc', 'npmrc')] : []),
    path.resolve('/', userconfig),
    '/.npmrc',
  ];
  const key = createHash('sha256')
    .update(JSON.stringify({ vars, files: files.map((f) => [f, stamp(f)]) }))
    .digest('hex');
  return { key, npm };
}

/** The answer kept for `key`, or undefined (no cache, another key, unreadable). */
export function readNpmRoot(stateDir: string, key: string): string | undefined {
  try {
    const kept = JSON.parse(fs.readFileSync(path.join(stateDir, NPM_ROOT_CACHE), 'utf8'));
    if (kept?.schema_version !== SCHEMA_VERSION || kept.key !== key || typeof kept.root !== 'string')
      return undefined;
    return kept.root;
  } catch {
    return undefined;
  }
}

/**
 * Asks the real npm the way Claude Code does (`sh -c "npm root -g"`, cwd `/`, the same environment,
 * 5 s) and keeps its answer. undefined: npm failed, which Claude Code's own call would see too.
 */
export async function askNpmRoot(
  stateDir: string,
  key: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  // Loaded when used: execa costs ~27 ms to load, and a cached answer needs none of it.
  const { execa } = await import('execa');
  // Claude Code's own call: node's exec, which runs the command with /bin/sh.
  const shell = '/bin/sh';
  const run = await execa(shell, ['-c', 'npm root -g'], {
    cwd: '/',
    env,
    extendEnv: false,
    timeout: 5_000,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
  });
  const root = run.exitCode === 0 ? String(run.stdout).trim() : '';
  if (!root) return undefined;
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  await writeAtomic(
    path.join(stateDir, NPM_ROOT_CACHE),
    `${JSON.stringify({ schema_version: SCHEMA_VERSION, key, root })}\n`,
  );
  return root;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The shim: `npm root -g` (exactly those two words) prints the kept answer; anything else runs the
 * real npm, with the shim's folder taken off PATH again when it leads it. Pure.
 */
export function npmShimScript(dir: string, root: string, npm: string): string {
  return [
    '#!/bin/sh',
    "# agentbox: Claude Code asks `npm root -g` at every sandboxed start; this is npm's own answer,",
    '# kept (src/sandbox/npm-root.ts). Every other call goes to the real npm.',
    `if [ "$#" -eq 2 ] && [ "$1" = root ] && [ "$2" = -g ]; then printf '%s\\n' ${quote(root)}; exit 0; fi`,
    `case "$PATH" in ${quote(`${dir}:`)}*) PATH=\${PATH#${quote(`${dir}:`)}}; export PATH;; esac`,
    `exec ${quote(npm)} "$@"`,
    '',
  ].join('\n');
}

/**
 * claude's environment with the shim's folder (`dir`, made here) first on PATH, the answer from the
 * cache or asked now; unchanged when there is no npm or npm has no answer.
 */
export async function withNpmRootShim(
  env: Record<string, string>,
  opts: { readonly dir: string; readonly stateDir: string },
): Promise<Record<string, string>> {
  const found = npmRootKey(env);
  if (!found) return env;
  const root = readNpmRoot(opts.stateDir, found.key) ?? (await askNpmRoot(opts.stateDir, found.key, env));
  if (root === undefined) return env;
  fs.mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  // Written anew at every start: nothing a run left there is ever run.
  writeScratchSync(path.join(opts.dir, 'npm'), npmShimScript(opts.dir, root, found.npm), 0o700);
  return { ...env, PATH: `${opts.dir}${path.delimiter}${env.PATH}` };
}
