import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discardRun } from '../../src/gate/discard.js';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { discardAction } from '../../src/web/actions.js';
import { cli, create, ledgerRepo, scratchDir } from './fixtures/ledger.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/**
 * A cloned repository can carry a ledger (`.agents/` added with `git add -f`): its runs show in
 * `status` and on the web page like the person's own. A planted run's state.json that names the
 * person's worktree and branch must not make Discard (the page's button, `agentbox discard`) or
 * `gc` remove them: only the run's own `agentbox/<run>` branch and the worktree git has on it go.
 */
describe('a ledger a cloned repository carries', () => {
  const setup = async (status: 'REVIEW' | 'MERGED') => {
    const { repo, ledger } = ledgerRepo();
    const base = (await headSha(repo.dir))!;
    // The person's own work: a worktree with uncommitted notes, and a branch with a commit of theirs.
    const wip = path.join(scratchDir(), 'wip');
    await addWorktree(repo.dir, { path: wip, branch: 'wipbranch', base });
    fs.writeFileSync(path.join(wip, 'notes.txt'), 'precious\n');
    git(repo.dir, 'branch', 'keepme', base);
    const planted = await create(ledger, 'fix a typo', '2020-01-01T10:00:00Z', { type: 'fix' });
    await updateState(ledger, planted.name, {
      status,
      worktree_path: fs.realpathSync(wip),
      branch: 'keepme',
      ended_at: '2020-01-01T11:00:00Z',
    });
    const kept = () => {
      expect(fs.readFileSync(path.join(wip, 'notes.txt'), 'utf8')).toBe('precious\n');
      expect(git(repo.dir, 'branch', '--list', 'keepme', 'wipbranch')).toMatch(/keepme[\s\S]*wipbranch/);
    };
    return { repo, ledger, planted, wip, kept };
  };

  it("the page's Discard removes neither the person's worktree nor their branch; it says so and logs it", async () => {
    const { repo, ledger, planted, wip, kept } = await setup('REVIEW');
    const done = await discardAction({ root: repo.dir, ledger, env: {} }, planted.id);
    kept();
    expect(done).toMatchObject({ removedWorktree: false, deletedBranch: false, branch: null });
    expect(done.left).toEqual(['branch keepme', `worktree ${fs.realpathSync(wip)}`]);
    const events = fs.readFileSync(path.join(planted.dir, 'events.jsonl'), 'utf8');
    expect(events).toContain('"event":"discard_left"');
    expect(readRun(ledger, planted.name).state?.status).toBe('DISCARDED');
  });

  it('agentbox discard: the same, and the terminal names what was left', async () => {
    const { repo, planted, kept } = await setup('REVIEW');
    const out = await cli(repo.dir, ['discard', planted.id]);
    kept();
    expect(out.stdout).toContain("  left branch keepme: its state names it, but it is not this run's own");
  });

  it('agentbox gc: an old decided run naming them removes neither', async () => {
    const { repo, planted, kept } = await setup('MERGED');
    const out = await cli(repo.dir, ['gc', '--older-than', '1d']);
    kept();
    expect(out.stdout).not.toMatch(/remov\w* (worktree|branch) /);
    expect(fs.existsSync(planted.dir)).toBe(false);
  });

  it("a run's own worktree and branch still go", async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
    const wt = path.join(scratchDir(), run.name);
    const branch = `agentbox/${run.name}`;
    await addWorktree(repo.dir, { path: wt, branch, base: (await headSha(repo.dir))! });
    await updateState(ledger, run.name, { status: 'REVIEW', worktree_path: fs.realpathSync(wt), branch });
    const done = await discardRun(repo.dir, readRun(ledger, run.name));
    expect(done).toMatchObject({ removedWorktree: true, deletedBranch: true, branch, left: [] });
    expect(fs.existsSync(wt)).toBe(false);
    expect(git(repo.dir, 'branch', '--list', branch)).toBe('');
  });
});
