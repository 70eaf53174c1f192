import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import {
  addWorktree,
  backoffMs,
  headSha,
  isTransientGitError,
  listWorktrees,
  parseWorktreeList,
  removeWorktree,
  type WorktreeInfo,
} from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

const SHA = '1d13b648d980d8c88d5317ac3e8177c0f8e53455';
const ZEROS = '0'.repeat(40);
const wt = (over: Partial<WorktreeInfo>): WorktreeInfo => ({
  path: '/r',
  head: SHA,
  branch: null,
  bare: false,
  detached: false,
  locked: false,
  prunable: false,
  ...over,
});

describe('parseWorktreeList', () => {
  it.each<[string, string, WorktreeInfo[]]>([
    ['nothing', '', []],
    ['the main worktree', `worktree /r\nHEAD ${SHA}\nbranch refs/heads/main\n\n`, [wt({ branch: 'main' })]],
    [
      'an unborn branch',
      `worktree /r\nHEAD ${ZEROS}\nbranch refs/heads/main\n\n`,
      [wt({ head: null, branch: 'main' })],
    ],
    ['a bare repository', 'worktree /r.git\nbare\n\n', [wt({ path: '/r.git', head: null, bare: true })]],
    ['a detached HEAD', `worktree /w\nHEAD ${SHA}\ndetached\n\n`, [wt({ path: '/w', detached: true })]],
    [
      'a branch with slashes',
      `worktree /w\nHEAD ${SHA}\nbranch refs/heads/agentbox/fix_0a1b2c\n`,
      [wt({ path: '/w', branch: 'agentbox/fix_0a1b2c' })],
    ],
    [
      'a path with spaces',
      `worktree /a b/c d\nHEAD ${SHA}\ndetached\n`,
      [wt({ path: '/a b/c d', detached: true })],
    ],
    [
      'locked without a reason',
      `worktree /w\nHEAD ${SHA}\ndetached\nlocked\n`,
      [wt({ path: '/w', detached: true, locked: true })],
    ],
    [
      'locked with a reason',
      `worktree /w\nHEAD ${SHA}\nbranch refs/heads/x\nlocked on a usb drive\n`,
      [wt({ path: '/w', branch: 'x', locked: true })],
    ],
    [
      'locked with a quoted multi-line reason',
      `worktree /w\nHEAD ${SHA}\nbranch refs/heads/x\nlocked "on usb\\ndrive"\n`,
      [wt({ path: '/w', branch: 'x', locked: true })],
    ],
    [
      'prunable without a reason',
      `worktree /w\nHEAD ${SHA}\ndetached\nprunable\n`,
      [wt({ path: '/w', detached: true, prunable: true })],
    ],
    [
      'prunable with a reason',
      `worktree /w\nHEAD ${SHA}\nbranch refs/heads/x\nprunable gitdir file points to non-existent location\n`,
      [wt({ path: '/w', branch: 'x', prunable: true })],
    ],
    [
      'CRLF line ends',
      `worktree /r\r\nHEAD ${SHA}\r\nbranch refs/heads/main\r\n\r\n`,
      [wt({ branch: 'main' })],
    ],
    [
      'an unknown key from a newer git',
      `worktree /r\nHEAD ${SHA}\nfuture yes\nbranch refs/heads/main\n`,
      [wt({ branch: 'main' })],
    ],
    [
      'the -z format',
      `worktree /r\0HEAD ${SHA}\0branch refs/heads/main\0\0worktree /w\0HEAD ${SHA}\0detached\0locked a\nb\0\0`,
      [wt({ branch: 'main' }), wt({ path: '/w', detached: true, locked: true })],
    ],
    [
      'several records',
      `worktree /r\nHEAD ${SHA}\nbranch refs/heads/main\n\nworktree /w1\nHEAD ${SHA}\nbranch refs/heads/a\n\nworktree /w2\nHEAD ${SHA}\ndetached\nprunable gone\n\n`,
      [
        wt({ branch: 'main' }),
        wt({ path: '/w1', branch: 'a' }),
        wt({ path: '/w2', detached: true, prunable: true }),
      ],
    ],
  ])('reads %s', (_name, porcelain, expected) => {
    expect(parseWorktreeList(porcelain)).toEqual(expected);
  });
});

describe('lock retries', () => {
  it.each([
    ["fatal: Unable to create '/r/.git/packed-refs.lock': File exists.", true],
    ["error: Unable to create '/r/.git/config.lock': File exists.", true],
    [
      "error: cannot lock ref 'refs/heads/x': Unable to create '/r/.git/refs/heads/x.lock': File exists.",
      true,
    ],
    ['error: could not lock config file .git/config', true],
    ['fatal: failed to read .git/worktrees/w3/commondir: Success', true],
    ["fatal: Invalid path '/r/.git/worktrees/w2': No such file or directory", true],
    ["fatal: Invalid path '/r/src/a.ts': No such file or directory", false],
    ["fatal: a branch named 'x' already exists", false],
    ["fatal: '/w' already exists", false],
  ])('%s → transient %s', (stderr, transient) => {
    expect(isTransientGitError(stderr)).toBe(transient);
  });

  it.each([
    [1, 1, 10],
    [2, 1, 20],
    [5, 1, 160],
    [9, 1, 320],
    [9, 0, 0],
    [3, 0.5, 20],
  ])('attempt %i with random %f waits %i ms', (attempt, random, ms) => {
    expect(backoffMs(attempt, random)).toBe(ms);
  });
});

describe('worktrees on a real repository', () => {
  let repo: TestRepo;
  let dir: string;

  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const setup = (files?: Record<string, string>) => {
    repo = gitRepo({ files: { 'src/a.ts': 'export const a = 1;\n', ...files } });
    dir = tempDir('agentbox-wt-');
    return repo;
  };
  const branches = () =>
    repo
      .git('branch', '--format=%(refname:short)')
      .split('\n')
      .filter((b) => b !== '');

  it('headSha is the commit HEAD points at', async () => {
    setup();
    expect(await headSha(repo.dir)).toBe(repo.git('rev-parse', 'HEAD').trim());
  });

  it('headSha is null in a repository without commits', async () => {
    dir = tempDir('agentbox-unborn-');
    execFileSync('git', ['init', '--quiet', '--initial-branch=main'], {
      cwd: dir,
      env: { ...process.env, ...GIT_ENV },
    });
    expect(await headSha(dir)).toBeNull();
  });

  it('headSha outside a repository throws GIT_FAILED', async () => {
    dir = tempDir('agentbox-norepo-');
    await expect(headSha(dir)).rejects.toMatchObject({ code: 'GIT_FAILED' });
  });

  it('addWorktree checks the branch out at the base in a new folder', async () => {
    setup();
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.write('later.txt', 'after the base\n');
    repo.commit('later');
    const target = path.join(dir, 'run 1');
    await addWorktree(repo.dir, { path: target, branch: 'agentbox/fix_1', base });
    expect(fs.readFileSync(path.join(target, 'src/a.ts'), 'utf8')).toBe('export const a = 1;\n');
    expect(fs.existsSync(path.join(target, 'later.txt'))).toBe(false);
    const list = await listWorktrees(repo.dir);
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ path: repo.dir, branch: 'main', bare: false });
    expect(list[1]).toEqual(wt({ path: target, head: base, branch: 'agentbox/fix_1' }));
    // --no-track: no upstream config was written for the run's branch.
    expect(repo.git('config', '--list', '--local')).not.toContain('branch.');
  });

  it('8 parallel addWorktree calls on one repository all succeed', async () => {
    setup();
    repo.git('pack-refs', '--all');
    const names = Array.from({ length: 8 }, (_, i) => `agentbox/run_${i}`);
    await Promise.all(
      names.map((branch, i) =>
        addWorktree(repo.dir, { path: path.join(dir, `w${i}`), branch, base: 'HEAD' }),
      ),
    );
    const list = await listWorktrees(repo.dir);
    expect(list.map((w) => w.branch).sort()).toEqual(['main', ...names].sort());
    for (let i = 0; i < 8; i++) expect(fs.existsSync(path.join(dir, `w${i}`, 'src/a.ts'))).toBe(true);
    const removed = await Promise.all(
      names.map((branch, i) =>
        removeWorktree(repo.dir, { path: path.join(dir, `w${i}`), branch, deleteBranch: true }),
      ),
    );
    expect(removed.every((r) => r.removedWorktree && r.deletedBranch)).toBe(true);
    expect(branches()).toEqual(['main']);
    expect(await listWorktrees(repo.dir)).toHaveLength(1);
  });

  it('refuses an existing branch, and leaves no folder', async () => {
    setup();
    repo.git('branch', 'taken');
    const target = path.join(dir, 'w');
    const error = await addWorktree(repo.dir, { path: target, branch: 'taken', base: 'HEAD' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(AgentboxError);
    expect(error).toMatchObject({ code: 'BRANCH_EXISTS', message: 'the branch taken already exists' });
    expect(error.hint).toContain('git branch -D taken');
    expect(fs.existsSync(target)).toBe(false);
  });

  it('refuses an existing path, and leaves no branch', async () => {
    setup();
    const target = path.join(dir, 'w');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'mine.txt'), 'keep me\n');
    await expect(addWorktree(repo.dir, { path: target, branch: 'b', base: 'HEAD' })).rejects.toMatchObject({
      code: 'PATH_EXISTS',
    });
    await expect(
      addWorktree(repo.dir, { path: path.join(target, 'mine.txt'), branch: 'b', base: 'HEAD' }),
    ).rejects.toMatchObject({ code: 'PATH_EXISTS' });
    expect(fs.readFileSync(path.join(target, 'mine.txt'), 'utf8')).toBe('keep me\n');
    expect(branches()).toEqual(['main']);
  });

  it('reads a relative path from the repository root, as git does', async () => {
    setup();
    const target = path.join(dir, 'relative');
    await addWorktree(repo.dir, { path: path.relative(repo.dir, target), branch: 'rel', base: 'HEAD' });
    expect((await listWorktrees(repo.dir))[1]?.path).toBe(target);
    expect(
      await removeWorktree(repo.dir, {
        path: path.relative(repo.dir, target),
        branch: 'rel',
        deleteBranch: true,
      }),
    ).toEqual({ removedWorktree: true, deletedBranch: true });
  });

  it('takes an existing empty folder (as git does)', async () => {
    setup();
    const target = path.join(dir, 'empty');
    fs.mkdirSync(target);
    await addWorktree(repo.dir, { path: target, branch: 'b', base: 'main' });
    expect(fs.existsSync(path.join(target, 'README.md'))).toBe(true);
  });

  it('removes the branch again when git cannot create the worktree', async () => {
    setup();
    const target = path.join(dir, 'w');
    await addWorktree(repo.dir, { path: target, branch: 'first', base: 'HEAD' });
    fs.rmSync(target, { recursive: true });
    repo.git('worktree', 'lock', target);
    // The folder is gone but git still has it registered (and locked): git refuses.
    await expect(
      addWorktree(repo.dir, { path: target, branch: 'second', base: 'HEAD' }),
    ).rejects.toMatchObject({
      code: 'WORKTREE_FAILED',
      hint: expect.stringContaining(`git worktree unlock ${target}`),
    });
    expect(branches()).toEqual(['first', 'main']);
    repo.git('worktree', 'unlock', target);
    await expect(
      addWorktree(repo.dir, { path: target, branch: 'second', base: 'HEAD' }),
    ).rejects.toMatchObject({
      hint: expect.stringContaining('git worktree prune'),
    });
    expect(branches()).toEqual(['first', 'main']);
  });

  it.each([
    ['a name that is no revision', 'nosuch'],
    ['a tree', 'HEAD^{tree}'],
    ['a blob', 'HEAD:README.md'],
    ['an option', '--orphan'],
  ])('refuses a base that is %s', async (_name, base) => {
    setup();
    await expect(
      addWorktree(repo.dir, { path: path.join(dir, 'w'), branch: 'b', base }),
    ).rejects.toMatchObject({ code: 'BAD_REVISION', message: `not a commit: ${base}` });
    expect(branches()).toEqual(['main']);
  });

  it('refuses an invalid branch name', async () => {
    setup();
    await expect(
      addWorktree(repo.dir, { path: path.join(dir, 'w'), branch: 'a..b', base: 'HEAD' }),
    ).rejects.toMatchObject({ code: 'WORKTREE_FAILED', message: 'not a valid branch name: a..b' });
  });

  it('refuses a repository without commits with the fix hint', async () => {
    dir = tempDir('agentbox-unborn-');
    execFileSync('git', ['init', '--quiet', '--initial-branch=main'], {
      cwd: dir,
      env: { ...process.env, ...GIT_ENV },
    });
    const error = await addWorktree(dir, {
      path: path.join(dir, '..', `${path.basename(dir)}-w`),
      branch: 'b',
      base: 'HEAD',
    }).catch((e) => e);
    expect(error).toMatchObject({ code: 'NO_COMMITS' });
    expect(error.hint).toContain('agentbox fix needs at least one commit — commit your work first');
    expect(fs.existsSync(path.join(dir, '..', `${path.basename(dir)}-w`))).toBe(false);
  });

  it('removeWorktree removes a dirty worktree and its branch, and a second call is fine', async () => {
    setup();
    const target = path.join(dir, 'w');
    await addWorktree(repo.dir, { path: target, branch: 'run', base: 'HEAD' });
    fs.writeFileSync(path.join(target, 'src/a.ts'), 'changed\n');
    fs.writeFileSync(path.join(target, 'new.txt'), 'untracked\n');
    const opts = { path: target, branch: 'run', deleteBranch: true };
    expect(await removeWorktree(repo.dir, opts)).toEqual({ removedWorktree: true, deletedBranch: true });
    expect(fs.existsSync(target)).toBe(false);
    expect(await removeWorktree(repo.dir, opts)).toEqual({ removedWorktree: false, deletedBranch: false });
    expect(await listWorktrees(repo.dir)).toHaveLength(1);
    expect(branches()).toEqual(['main']);
  });

  it('removeWorktree keeps the branch unless asked', async () => {
    setup();
    const target = path.join(dir, 'w');
    await addWorktree(repo.dir, { path: target, branch: 'keep', base: 'HEAD' });
    expect(await removeWorktree(repo.dir, { path: target, branch: 'keep', deleteBranch: false })).toEqual({
      removedWorktree: true,
      deletedBranch: false,
    });
    expect(branches()).toEqual(['keep', 'main']);
    expect(await removeWorktree(repo.dir, { path: target, deleteBranch: true })).toEqual({
      removedWorktree: false,
      deletedBranch: false,
    });
  });

  it('removeWorktree forgets a worktree whose folder was deleted by hand', async () => {
    setup();
    const target = path.join(dir, 'w');
    await addWorktree(repo.dir, { path: target, branch: 'gone', base: 'HEAD' });
    fs.rmSync(target, { recursive: true });
    expect((await listWorktrees(repo.dir))[1]?.prunable).toBe(true);
    const result = await removeWorktree(repo.dir, { path: target, branch: 'gone', deleteBranch: true });
    expect(result.deletedBranch).toBe(true);
    expect(await listWorktrees(repo.dir)).toHaveLength(1);
  });

  it('removeWorktree refuses a locked worktree and says how to unlock it', async () => {
    setup();
    const target = path.join(dir, 'w');
    await addWorktree(repo.dir, { path: target, branch: 'locked', base: 'HEAD' });
    repo.git('worktree', 'lock', '--reason', 'on a usb drive', target);
    await expect(removeWorktree(repo.dir, { path: target, deleteBranch: true })).rejects.toMatchObject({
      code: 'WORKTREE_FAILED',
      hint: expect.stringContaining(`git worktree unlock ${target}`),
    });
    expect(fs.existsSync(target)).toBe(true);
  });

  it('removeWorktree does not delete a branch another worktree has checked out', async () => {
    setup();
    await expect(
      removeWorktree(repo.dir, { path: path.join(dir, 'none'), branch: 'main', deleteBranch: true }),
    ).rejects.toMatchObject({
      code: 'WORKTREE_FAILED',
      message: expect.stringContaining('cannot delete the branch main'),
    });
  });
});
