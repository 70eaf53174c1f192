import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { merge } from '../../src/commands/merge.js';
import { GIT_ENV, type TestRepo } from '../helpers/git-repo.js';
import { context } from './fixtures/ledger.js';
import { reviewRun, statusOf } from './fixtures/review-run.js';

/*
 * `merge --yes --commit` committed the person's own uncommitted edits in the files it merged
 * (`git commit --only` takes a path's working-tree content): long.txt's appended `user line` went
 * into the run's commit, unsaid (found by a tester). The commit is now HEAD plus the patch, made in
 * a private index; the person's edits stay where they were, uncommitted, and the message says so.
 */

const LINES = Array.from({ length: 30 }, (_, i) => `${i + 1}\n`).join('');
const FIXED = LINES.replace(/^1\n/, 'ONE\n');

/** A repository with long.txt (1..30) and a fix run in REVIEW whose patch changes line 1. */
const fixRun = () =>
  reviewRun({ files: { 'long.txt': LINES }, agent: { 'long.txt': FIXED }, task: 'fix line one' });

const status = statusOf;
/** Everything the merge could have touched in the checkout: files, index, HEAD. */
const checkout = (repo: TestRepo) => ({
  status: repo.git('status', '--porcelain', '--untracked-files=all'),
  head: repo.git('rev-parse', 'HEAD'),
  long: repo.read('long.txt'),
  index: fs.readFileSync(path.join(repo.dir, '.git', 'index')).toString('base64'),
});

describe('merge --commit commits the patch, never the person’s own edits in the files it merges', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('unstaged edits in a merged file: left out of the commit, still in the tree, and said', async () => {
    const r = await fixRun();
    const before = r.repo.git('rev-parse', 'HEAD').trim();
    r.repo.write('long.txt', `${LINES}user line\n`);
    r.repo.write('other.txt', 'other\n');
    r.repo.git('add', 'other.txt');
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true })).toBe(0);
    // The commit: HEAD plus the patch, nothing else.
    expect(r.repo.git('rev-parse', 'HEAD^').trim()).toBe(before);
    expect(r.repo.git('show', 'HEAD:long.txt')).toBe(FIXED);
    expect(r.repo.git('show', '--format=', '--name-only', 'HEAD')).toBe('long.txt\n');
    // The tree: as it was, plus the patch; the person's edit uncommitted, other.txt still staged.
    expect(r.repo.read('long.txt')).toBe(`${FIXED}user line\n`);
    expect(r.repo.git('diff', '--cached', '--name-only')).toBe('other.txt\n');
    expect(r.repo.git('diff', '-U0', '--', 'long.txt')).toMatch(/@@ -30,0 \+31 @@.*\n\+user line\n$/);
    expect(r.repo.git('status', '--porcelain')).toBe(' M long.txt\nA  other.txt\n');
    expect(io.stdout).toMatch(/— commit [0-9a-f]{12}\n/);
    expect(io.stdout).toContain(
      '  your uncommitted edits in long.txt were left out of the commit: they stay in your working tree (git diff shows them)\n',
    );
    expect(status(r)).toBe('MERGED');
  });

  it('staged edits in a merged file: left out of the commit, still staged, on top of the run’s change', async () => {
    const r = await fixRun();
    r.repo.write('long.txt', `${LINES}staged line\n`);
    r.repo.git('add', 'long.txt');
    r.repo.write('long.txt', `${LINES}staged line\nunstaged line\n`);
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true, json: true })).toBe(0);
    expect(r.repo.git('show', 'HEAD:long.txt')).toBe(FIXED);
    // The index: what the person staged, with the run's change: a next `git commit` keeps both.
    expect(r.repo.git('show', ':long.txt')).toBe(`${FIXED}staged line\n`);
    expect(r.repo.read('long.txt')).toBe(`${FIXED}staged line\nunstaged line\n`);
    expect(r.repo.git('diff', '--cached', '-U0')).toMatch(/@@ -30,0 \+31 @@.*\n\+staged line\n$/);
    expect(r.repo.git('diff', '-U0')).toMatch(/@@ -31,0 \+32 @@.*\n\+unstaged line\n$/);
    expect(JSON.parse(io.stdout)).toMatchObject({
      uncommitted: [{ path: 'long.txt', staged: true, unstaged: true }],
    });
  });

  it('a merged file the person has not touched: the index follows the commit, nothing said', async () => {
    const r = await fixRun();
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true })).toBe(0);
    expect(r.repo.git('status', '--porcelain')).toBe('');
    expect(io.stdout).not.toContain('left out of the commit');
  });

  it.each([
    [
      'the patch does not apply to what the person staged',
      (repo: TestRepo) => {
        repo.write('long.txt', LINES.replace(/^1\n/, 'uno\n'));
        repo.git('add', 'long.txt');
        repo.write('long.txt', LINES);
      },
      /the changes of .* do not apply to what you staged in long\.txt/,
      /Commit what you staged, or unstage it \(git restore --staged long\.txt\)/,
    ],
    [
      'the patch applies to the working tree only thanks to the person’s uncommitted edits',
      (repo: TestRepo) => {
        repo.write('long.txt', LINES.replace(/^1\n/, 'uno\n'));
        repo.commit('uno');
        repo.write('long.txt', LINES);
      },
      /the changes of .* do not apply to HEAD's long\.txt, only to your uncommitted edits of it/,
      /Commit your edits of long\.txt first/,
    ],
  ])('%s: refused, nothing changed, the run still in REVIEW', async (_what, person, said, hint) => {
    const r = await fixRun();
    person(r.repo);
    const before = checkout(r.repo);
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'MERGE_REFUSED', message: expect.stringMatching(said) });
    expect((error as { hint: string }).hint).toMatch(/^nothing was changed\./);
    expect((error as { hint: string }).hint).toMatch(hint);
    expect((error as { hint: string }).hint).toContain(`or merge without --commit (agentbox merge ${r.id})`);
    expect(checkout(r.repo)).toEqual(before);
    expect(status(r)).toBe('REVIEW');
  });
});
