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

/**
 * A ledger that arrives by other means than git (an archive unpacked, then `git init`) is not
 * refused by the check above: git tracks nothing of it. Its folders must still be agentbox's own,
 * and a run's records files of their own: a link in either place named the person's files.
 */
describe('a ledger whose folders or records are links', () => {
  const SECRET = 'aws_secret_access_key = wJalrXUtnFEMI-planted-secret';

  /** A repository with one run, whose ledger folder `part` is moved elsewhere and linked back. */
  const linkedAt = async (part: '.agents' | '.agents/runs' | '.agents/pointers') => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'fix a typo', '2020-01-01T10:00:00Z', { type: 'fix' });
    await updateState(ledger, run.name, { status: 'ACTIVE', pid: 999_999_999 });
    const elsewhere = path.join(tempDir('agentbox-elsewhere-'), 'theirs');
    fs.renameSync(path.join(repo.dir, part), elsewhere);
    fs.symlinkSync(elsewhere, path.join(repo.dir, part));
    return { dir: repo.dir, elsewhere };
  };

  it.each([
    ['.agents/runs', ['status']],
    ['.agents/runs', ['scout', 'anything']],
    ['.agents/runs', ['gc', '--older-than', '1d']],
    ['.agents/runs', ['recover']],
    ['.agents', ['status']],
    ['.agents', ['init']],
    ['.agents/pointers', ['show', 'latest']],
  ] as const)(
    '%s a link: agentbox %j is refused, names the link, and changes nothing on either side',
    async (part, argv) => {
      const { dir, elsewhere } = await linkedAt(part);
      const before = [snapshotTree(dir, { skip: ['.git'] }), snapshotTree(elsewhere)];
      const out = await cli(dir, [...argv]);
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(`${part} → ${elsewhere} is a symbolic link`);
      expect(out.stderr).toContain('mv .agents .agents-linked, then agentbox init');
      expect([snapshotTree(dir, { skip: ['.git'] }), snapshotTree(elsewhere)]).toEqual(before);
    },
  );

  it.each(['state.json', 'meta.yaml'])(
    "a run's %s that links to a secret is not read: its text is never printed",
    async (record) => {
      const { repo, ledger } = ledgerRepo();
      const run = await create(ledger, 'fix a typo', '2020-01-01T10:00:00Z', { type: 'fix' });
      const secret = path.join(tempDir('agentbox-home-'), 'credentials');
      fs.writeFileSync(secret, `[default]\n${SECRET}\n`);
      const file = path.join(ledger.runsDir, run.name, record);
      fs.rmSync(file);
      fs.symlinkSync(secret, file);
      for (const argv of [['status'], ['show', run.id], ['status', '--json']]) {
        const out = await cli(repo.dir, argv);
        expect(`${out.stdout}${out.stderr}`).not.toContain('wJalrXUtnFEMI');
        if (argv[0] === 'show') expect(out.stderr).toContain(`${file} is a symbolic link`);
      }
      // The same text as a file of the run's own is read, and its parse error quotes it: the link is
      // what is refused, not the content (this test fails if the refusal goes).
      fs.rmSync(file);
      fs.writeFileSync(file, `${SECRET}\n`);
      const shown = await cli(repo.dir, ['show', run.id]);
      expect(shown.code).toBe(1);
      expect(shown.stderr).not.toContain('is a symbolic link');
    },
  );
});
