import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { headSha } from '../../src/git/worktree.js';
import { createRun, readRun, updateState } from '../../src/ledger/index.js';
import { reviseAction } from '../../src/web/revise.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE, errorOf, ledgerRepo } from './fixtures/ledger.js';

/**
 * A ledger is files a cloned repository can carry. A planted CRASHED fix run whose state names the
 * person's own checkout as its worktree: `agentbox recover` (the page's Recover button runs it)
 * rolled that checkout back — `git reset --hard` to a commit of the author's choosing and `git
 * clean -fd` — before any other check. Resume and revise work in the same place. Each must refuse,
 * before anything changes, a worktree git does not have on the run's own branch.
 */
describe('a planted run never gets the person’s checkout rolled back or worked in', () => {
  const planted = async (status: 'CRASHED' | 'ABORTED') => {
    const { repo, ledger } = ledgerRepo();
    const base = (await headSha(repo.dir))!;
    fs.writeFileSync(path.join(repo.dir, 'mine.txt'), 'untracked work\n');
    const made = await createRun(ledger, {
      type: 'fix',
      task: 'fix a typo',
      envelope: ENVELOPE,
      repoShaStart: base,
      now: new Date('2026-03-01T10:00:00Z'),
    });
    await updateState(ledger, made.name, {
      status,
      worktree_path: repo.dir,
      branch: `agentbox/${made.name}`,
      session_id: 's-1',
      ...(status === 'CRASHED' ? { failure: { kind: 'crashed', message: 'killed' } } : {}),
    });
    const io = memoryIo();
    const home = tempDir('agentbox-home-');
    fs.mkdirSync(path.join(home, '.claude', 'projects', 'p'), { recursive: true });
    fs.writeFileSync(path.join(home, '.claude', 'projects', 'p', 's-1.jsonl'), '{}\n');
    const env = { ...GIT_ENV, PATH: process.env.PATH, HOME: home };
    const cli = (argv: string[]) => run(argv, { cwd: repo.dir, env, io });
    return { repo, ledger, made, io, cli, env };
  };

  it.each([
    ['recover', ['recover'], 'CRASHED'],
    ['resume', ['resume'], 'ABORTED'],
  ] as const)(
    'agentbox %s: refused, the checkout and its untracked file untouched',
    async (_, argv, status) => {
      const { repo, ledger, made, io, cli } = await planted(status);
      const code = await cli([...argv, made.name.slice(-6)]);
      expect(io.stderr).toMatch(/records the worktree .* which is not its own/);
      expect(code).not.toBe(0);
      expect(fs.readFileSync(path.join(repo.dir, 'mine.txt'), 'utf8')).toBe('untracked work\n');
      expect(readRun(ledger, made.name).state?.status).toBe(status);
    },
  );

  it("the page's revise of a planted REVIEW run: 409, nothing begun in the checkout", async () => {
    const { repo, ledger, made, env } = await planted('ABORTED');
    await updateState(ledger, made.name, { status: 'REVIEW' });
    const error = await errorOf(() =>
      reviseAction({ root: repo.dir, ledger, env }, made.id, { message: 'go on' }),
    );
    expect(error).toMatchObject({ status: 409 });
    expect((error as Error).message).toMatch(/records the worktree .* which is not its own/);
    expect(readRun(ledger, made.name).state?.status).toBe('REVIEW');
    expect(fs.readFileSync(path.join(repo.dir, 'mine.txt'), 'utf8')).toBe('untracked work\n');
  });
});
