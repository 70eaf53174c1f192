import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { npmRootKey, withNpmRootShim } from '../../src/sandbox/npm-root.js';
import { tempDir } from '../helpers/git-repo.js';

/**
 * The kept `npm root -g` (src/sandbox/npm-root.ts): its key follows what npm reads, and the `npm`
 * it puts first on claude's PATH answers exactly that question from it and runs the real npm for
 * everything else (real npm, real sh).
 */
describe('the npm root -g shim', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = tempDir('agentbox-npm-root-');
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const base = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home });
  const sh = (env: Record<string, string>, command: string) =>
    execFileSync('/bin/sh', ['-c', command], { cwd: '/', env, encoding: 'utf8' }).trim();

  it('the key changes with what npm reads: npmrc files, npm_config_* and PREFIX, PATH; not with the rest', () => {
    const home = dir();
    const env = base(home);
    const key = npmRootKey(env)!.key;
    expect(npmRootKey({ ...env, LANG: 'C', AGENTBOX_RUN: 'x' })!.key).toBe(key);
    expect(npmRootKey({ ...env, npm_config_prefix: '/opt/x' })!.key).not.toBe(key);
    expect(npmRootKey({ ...env, NPM_CONFIG_GLOBALCONFIG: '/opt/x' })!.key).not.toBe(key);
    expect(npmRootKey({ ...env, PREFIX: '/opt/x' })!.key).not.toBe(key);
    expect(npmRootKey({ ...env, PATH: `${home}:${env.PATH}` })!.key).not.toBe(key);
    fs.writeFileSync(path.join(home, '.npmrc'), 'prefix=/opt/y\n');
    expect(npmRootKey(env)!.key).not.toBe(key);
  });

  it('no npm on PATH: no shim, the environment unchanged', async () => {
    const env = { PATH: dir(), HOME: dir() };
    expect(npmRootKey(env)).toBeNull();
    expect(await withNpmRootShim(env, { dir: path.join(dir(), 'bin'), stateDir: dir() })).toBe(env);
  });

  it("answers npm root -g as npm does, from the kept answer; every other call is npm's", async () => {
    const home = dir();
    const env = base(home);
    const state = dir();
    const shimDir = path.join(dir(), 'bin');
    const shimmed = await withNpmRootShim(env, { dir: shimDir, stateDir: state });
    expect(shimmed.PATH).toBe(`${shimDir}:${env.PATH}`);
    const root = sh(env, 'npm root -g');
    expect(JSON.parse(fs.readFileSync(path.join(state, 'npm-root.json'), 'utf8')).root).toBe(root);
    expect(sh(shimmed, 'command -v npm')).toBe(path.join(shimDir, 'npm'));
    expect(sh(shimmed, 'npm root -g')).toBe(root);
    expect(sh(shimmed, 'npm --version')).toBe(sh(env, 'npm --version'));
    // Other words than exactly `root -g` go to npm (here: an answer the kept one is not).
    expect(sh(shimmed, `npm root -g --prefix ${home}/p`)).toBe(`${home}/p/lib/node_modules`);
    // npm and what it runs see PATH without the shim.
    const seen = sh(shimmed, 'npm exec --yes -- node -p process.env.PATH');
    expect(seen).not.toContain(shimDir);
    expect(seen.endsWith(`:${env.PATH}`)).toBe(true);
    // The kept answer is used, not asked again: a planted one shows it (never written by a run).
    const kept = path.join(state, 'npm-root.json');
    fs.writeFileSync(kept, fs.readFileSync(kept, 'utf8').replace(root, '/kept/answer'));
    const again = await withNpmRootShim(env, { dir: shimDir, stateDir: state });
    expect(sh(again, 'npm root -g')).toBe('/kept/answer');
    // A key that no longer matches asks npm again.
    fs.writeFileSync(path.join(home, '.npmrc'), `prefix=${home}/q\n`);
    const changed = await withNpmRootShim(env, { dir: shimDir, stateDir: state });
    expect(sh(changed, 'npm root -g')).toBe(`${home}/q/lib/node_modules`);
  }, 60_000);
});
