import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { merge } from '../../src/commands/merge.js';
import { EventLog } from '../../src/ledger/events.js';
import { GIT_ENV, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { context } from './fixtures/ledger.js';
import { reviewRun, statusOf } from './fixtures/review-run.js';

/*
 * `merge --commit` applied the patch, then git refused the commit (no identity; a merge under way):
 * the files were left in the tree, the run stayed in REVIEW with `merge_git committed: true`
 * logged, and a second merge was refused on the run's own files (found by a user's eye). Now what
 * git would refuse is refused before anything is applied, and a commit that fails anyway leaves
 * the run MERGED, as the tree is, saying so.
 */

/** A repository with a fix run in REVIEW whose patch adds new.txt and changes a.txt. */
const fixRun = () =>
  reviewRun({
    files: { 'a.txt': 'a\n' },
    agent: { 'new.txt': 'new\n', 'a.txt': 'b\n' },
    task: 'add new.txt',
  });

const status = statusOf;
/** Everything the merge could have touched in the checkout: files, index, HEAD. */
const checkout = (repo: TestRepo) => ({
  status: repo.git('status', '--porcelain', '--untracked-files=all'),
  head: repo.git('rev-parse', 'HEAD'),
  a: fs.readFileSync(path.join(repo.dir, 'a.txt'), 'utf8'),
  index: fs.readFileSync(path.join(repo.dir, '.git', 'index')).toString('base64'),
});

describe('merge --commit: a commit git would refuse is refused before anything is applied', () => {
  const home = tempDir('agentbox-merge-commit-home-');
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    // No identity but the repository's own (the machine's global config may hold one).
    vi.stubEnv('HOME', home);
    vi.stubEnv('XDG_CONFIG_HOME', home);
    vi.stubEnv('GIT_CONFIG_NOSYSTEM', '1');
  });
  afterAll(() => vi.unstubAllEnvs());

  it.each([
    [
      'git does not know who you are',
      (repo: TestRepo) => {
        for (const key of [
          'GIT_AUTHOR_NAME',
          'GIT_AUTHOR_EMAIL',
          'GIT_COMMITTER_NAME',
          'GIT_COMMITTER_EMAIL',
        ])
          vi.stubEnv(key, undefined);
        repo.git('config', '--unset', 'user.email');
        repo.git('config', '--unset', 'user.name');
        repo.git('config', 'user.useConfigOnly', 'true');
      },
      /git cannot make a commit in .*\(no email was given and auto-detection is disabled\)/,
      /Tell git who you are/,
    ],
    [
      'a git merge under way',
      (repo: TestRepo) =>
        fs.writeFileSync(path.join(repo.dir, '.git', 'MERGE_HEAD'), repo.git('rev-parse', 'HEAD')),
      /a git merge is under way in .* \(MERGE_HEAD\)/,
      /git merge --continue\) or abort it \(git merge --abort\)/,
    ],
    [
      'a cherry-pick under way',
      (repo: TestRepo) =>
        fs.writeFileSync(path.join(repo.dir, '.git', 'CHERRY_PICK_HEAD'), repo.git('rev-parse', 'HEAD')),
      /a git cherry-pick is under way/,
      /git cherry-pick --abort/,
    ],
    [
      'unmerged paths in the index',
      (repo: TestRepo) => {
        // Three stages of one path, as a conflict leaves them (a stash pop's, say: no MERGE_HEAD).
        const sha = repo.git('rev-parse', 'HEAD:a.txt').trim();
        const info = [1, 2, 3].map((stage) => `100644 ${sha} ${stage}\tother.txt\n`).join('');
        execFileSync('git', ['update-index', '--index-info'], { cwd: repo.dir, input: info });
      },
      /1 path\(s\) in .* are unmerged/,
      /Resolve them/,
    ],
  ])('%s: refused, nothing changed, the run still in REVIEW', async (_what, person, said, hint) => {
    const r = await fixRun();
    person(r.repo);
    const before = checkout(r.repo);
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'MERGE_REFUSED', message: expect.stringMatching(said) });
    expect((error as { hint: string }).hint).toMatch(hint);
    expect((error as { hint: string }).hint).toMatch(/^nothing was changed\./);
    expect(checkout(r.repo)).toEqual(before);
    expect(status(r)).toBe('REVIEW');
    expect(new EventLog(r.dir).read().some((e) => e.event === 'merge_git')).toBe(false);
    // Without --commit, the same merge goes on: the files applied, not committed.
    const { ctx: plain } = context(r.repo.dir);
    expect(await merge(plain, r.id, { yes: true })).toBe(0);
    expect(fs.readFileSync(path.join(r.repo.dir, 'new.txt'), 'utf8')).toBe('new\n');
    expect(status(r)).toBe('MERGED');
    for (const key of Object.keys(GIT_ENV)) vi.stubEnv(key, GIT_ENV[key as keyof typeof GIT_ENV]);
  });

  it('a commit git cannot make (a signing program that fails): refused before the apply, nothing changed', async () => {
    const r = await fixRun();
    r.repo.git('config', 'commit.gpgSign', 'true');
    r.repo.git('config', 'gpg.program', 'false');
    const before = checkout(r.repo);
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'GIT_FAILED',
      message: expect.stringMatching(
        /^refusing to merge with --commit: git could not make the commit in .*: .*sign/,
      ),
      hint: expect.stringMatching(/^nothing was changed\. .*or merge without --commit/),
    });
    expect(checkout(r.repo)).toEqual(before);
    expect(r.repo.exists('new.txt')).toBe(false);
    expect(status(r)).toBe('REVIEW');
  });

  it('a commit that cannot land after the apply (the branch locked): the run MERGED, as the tree is, and said', async () => {
    const r = await fixRun();
    const head = r.repo.git('rev-parse', 'HEAD');
    // Another git holds the branch: update-ref is refused once the patch is in the tree.
    fs.writeFileSync(path.join(r.repo.dir, '.git', 'refs', 'heads', 'main.lock'), '');
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true }).catch((e: unknown) => e);
    fs.rmSync(path.join(r.repo.dir, '.git', 'refs', 'heads', 'main.lock'));
    expect(error).toMatchObject({
      code: 'GIT_FAILED',
      message: expect.stringMatching(new RegExp(`^merged ${r.name} into .*, but git could not commit it: `)),
      hint: expect.stringMatching(/recorded MERGED and its files are in your working tree, not committed/),
    });
    expect(fs.readFileSync(path.join(r.repo.dir, 'new.txt'), 'utf8')).toBe('new\n');
    // HEAD and the index as they were: the merged files are changes in the tree, nothing staged.
    expect(r.repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(r.repo.git('status', '--porcelain')).toBe(' M a.txt\n?? new.txt\n');
    expect(status(r)).toBe('MERGED');
    const events = new EventLog(r.dir).read();
    expect(events.find((e) => e.event === 'merge_git')).toMatchObject({ committed: false });
    // The ledger's line for the change of status says what happened.
    const index = fs.readFileSync(path.join(r.repo.dir, '.agents', 'INDEX.jsonl'), 'utf8');
    expect(index).toMatch(/"event":"merged".*2 file\(s\) applied, not committed: /);
    // A second merge says it is merged, not a conflict on its own files.
    await expect(merge(context(r.repo.dir).ctx, r.id, { yes: true, commit: true })).rejects.toMatchObject({
      message: `run ${r.name} is already merged`,
    });
  });

  it('says what the merge lands on: the branch checked out, or a detached HEAD (it said only the folder)', async () => {
    const r = await fixRun();
    r.repo.git('checkout', '-q', '--detach');
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true })).toBe(0);
    expect(io.stdout).toContain(`merged 2 file(s) into ${r.repo.dir} (a detached HEAD) (not committed)`);
    const other = await fixRun();
    other.repo.git('checkout', '-q', '-b', 'feature/x');
    const second = context(other.repo.dir);
    expect(await merge(second.ctx, other.id, { yes: true })).toBe(0);
    expect(second.io.stdout).toContain(`into ${other.repo.dir} (branch feature/x) (not committed)`);
  });
});
