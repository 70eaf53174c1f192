import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { updateState } from '../../src/ledger/index.js';
import { GIT_ENV, snapshotTree, tempDir } from '../helpers/git-repo.js';
import { cli, create, ledgerRepo } from './fixtures/ledger.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

/**
 * A repository whose author committed their ledger (`git add -f .agents`): in a clone, agentbox
 * uses none of it — every command is refused before it (or the watchdog that runs before it)
 * reads or writes a planted run, with what to do instead; and following that works.
 */
describe('a ledger that came with the clone', () => {
  const clone = async () => {
    const { repo, ledger } = ledgerRepo();
    const planted = await create(ledger, 'fix a typo', '2020-01-01T10:00:00Z', { type: 'fix' });
    // ACTIVE with a pid that is gone: the watchdog would mark it CRASHED (write state.json, events).
    await updateState(ledger, planted.name, { status: 'ACTIVE', pid: 999_999_999 });
    git(repo.dir, 'add', '-f', '.agents');
    git(repo.dir, 'commit', '-q', '-m', 'my runs');
    const dir = path.join(tempDir('agentbox-clone-'), 'clone');
    git(path.dirname(dir), 'clone', '-q', repo.dir, dir);
    return { dir, planted };
  };

  it.each([
    ['status'],
    ['init'],
    ['show', 'latest'],
    ['discard', 'latest'],
    ['recover'],
    ['gc', '--older-than', '1d'],
    ['ui', '--no-open'],
    ['scout', 'anything'],
  ])('agentbox %s is refused, says why and what to do, and changes nothing', async (...argv) => {
    const { dir } = await clone();
    const before = snapshotTree(dir, { skip: ['.git'] });
    const out = await cli(dir, argv);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`${dir}: git tracks files in .agents/ (.agents/`);
    expect(out.stderr).toContain("a ledger that came with the repository is its author's runs, not yours");
    expect(out.stderr).toContain('git rm -r -q --cached .agents && mv .agents .agents-from-git');
    expect(snapshotTree(dir, { skip: ['.git'] })).toEqual(before);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('from a folder inside the clone too; and after the hint, agentbox init and status work', async () => {
    const { dir, planted } = await clone();
    fs.mkdirSync(path.join(dir, 'src'));
    expect((await cli(path.join(dir, 'src'), ['status'])).code).toBe(1);
    git(dir, 'rm', '-r', '-q', '--cached', '.agents');
    fs.renameSync(path.join(dir, '.agents'), path.join(dir, '.agents-from-git'));
    expect((await cli(dir, ['init'])).code).toBe(0);
    const status = await cli(dir, ['status']);
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain(planted.id);
  });
});
