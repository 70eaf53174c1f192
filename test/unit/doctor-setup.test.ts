import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { checkSetup, lockfileNeeds, programsOf, simpleCommands, which } from '../../src/doctor/setup.js';
import { findRepo } from '../../src/git/repo.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

describe('doctor: runs.setup and runs.verify, checked without running them (issue 29)', () => {
  it.each([
    ['npm ci', ['npm ci']],
    ['CI=1 npm ci && npm run build', ['npm ci', 'npm run build']],
    [
      'cd web; pnpm install --frozen-lockfile | tee log',
      ['cd web', 'pnpm install --frozen-lockfile', 'tee log'],
    ],
    ['(make deps) || true', ['make deps)', 'true']],
  ])('simpleCommands(%j)', (line, expected) => {
    expect(simpleCommands(line)).toEqual(expected);
  });

  it.each([
    ['npm ci', ['npm']],
    ['FOO=1 BAR=2 ./scripts/setup.sh --fast', ['./scripts/setup.sh']],
    ['cd web && npm ci && npm ci', ['npm']],
    ['test -d node_modules || cp -a "$AGENTBOX_REPO_ROOT/node_modules" .', ['cp']],
    ['"uv" sync', ['uv']],
  ])('programsOf(%j)', (line, expected) => {
    expect(programsOf(line)).toEqual(expected);
  });

  it.each([
    ['npm ci', ['npm ci']],
    ['npm  clean-install', ['npm ci']],
    ['npm install', []],
    ['npm ci --ignore-scripts && pnpm i --frozen-lockfile', ['npm ci', 'pnpm install --frozen-lockfile']],
    ['pnpm install', []],
    ['yarn install --immutable', ['yarn install --immutable']],
    ['yarn --frozen-lockfile', ['yarn install --immutable']],
    ['yarn install', []],
    ['bun install --frozen-lockfile', ['bun install --frozen-lockfile']],
    ['echo npm ci', []],
  ])('lockfileNeeds(%j)', (line, labels) => {
    expect(lockfileNeeds(line).map((r) => r.label)).toEqual(labels);
  });

  it('which: on PATH, by a relative path, never a folder or a file that cannot run', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'x\n', { mode: 0o644 });
    fs.mkdirSync(path.join(dir, 'folder'));
    expect(which('tool', `/nonexistent:${dir}`, '/')).toBe(path.join(dir, 'tool'));
    expect(which('./tool', '', dir)).toBe(path.join(dir, 'tool'));
    expect(which('plain', dir, '/')).toBeNull();
    expect(which('folder', dir, '/')).toBeNull();
    expect(which('sh', '/usr/bin:/bin', '/')).not.toBeNull();
  });

  it("checkSetup in a real repository: the lockfile must be committed, the program on the run's PATH", async () => {
    const repo = gitRepo({ files: { 'package.json': '{}\n' } });
    const found = await findRepo(repo.dir);
    const config = (setup: string | null, verify: string | null = null) => ({
      ...DEFAULT_CONFIG,
      runs: { ...DEFAULT_CONFIG.runs, setup, verify },
    });
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    expect(await checkSetup(found, env, config(null))).toMatchObject({ ok: true });

    const noLock = await checkSetup(found, env, config('npm ci'));
    expect(noLock.ok).toBe(false);
    expect(noLock.detail).toBe(
      'runs.setup "npm ci": npm ci needs package-lock.json or npm-shrinkwrap.json committed, and HEAD has none (a fix run\'s worktree is a checkout of HEAD)',
    );
    expect(noLock.fix).toContain('cp -a --reflink=auto "$AGENTBOX_REPO_ROOT/node_modules" .');

    // In the working tree but not committed: still missing from a run's worktree.
    fs.writeFileSync(path.join(repo.dir, 'package-lock.json'), '{}\n');
    expect((await checkSetup(found, env, config('npm ci'))).ok).toBe(false);
    repo.commit('lockfile');
    expect(await checkSetup(found, env, config('npm ci', 'npm test'))).toMatchObject({ ok: true });

    const noTool = await checkSetup(found, { PATH: '/nonexistent' }, config('npm ci'));
    expect(noTool).toMatchObject({
      ok: false,
      detail: 'runs.setup "npm ci": "npm" not found on the run\'s PATH',
    });
    const verify = await checkSetup(found, env, config(null, 'no-such-tool-29 --check'));
    expect(verify.ok).toBe(false);
    expect(verify.detail).toBe(
      'runs.verify "no-such-tool-29 --check": "no-such-tool-29" not found on the run\'s PATH',
    );
  });
});
