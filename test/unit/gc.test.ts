import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { foldIndex, type Ledger, type RunStatus, readIndexLog, updateState } from '../../src/ledger/index.js';
import { readLinkedRun } from '../../src/ledger/links.js';
import { onBehalfOf } from '../../src/process/owner.js';
import { createPrivateArea, privateBase } from '../../src/sandbox/private.js';
import { cli, create, idSequence, ledgerRepo, scratchDir } from './fixtures/ledger.js';

const DAY = 86_400_000;
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A fix run with a real worktree and branch, ended `daysAgo` with `status`. */
async function fixRun(
  ledger: Ledger,
  root: string,
  worktrees: string,
  id: string,
  status: RunStatus,
  daysAgo: number,
) {
  const run = await create(ledger, `task ${id}`, new Date(Date.now() - daysAgo * DAY).toISOString(), {
    type: 'fix',
    ids: idSequence(id),
  });
  const wt = path.join(worktrees, run.name);
  const branch = `agentbox/${run.name}`;
  await addWorktree(root, { path: wt, branch, base: (await headSha(root))! });
  git(root, 'update-ref', `refs/agentbox/checkpoints/${run.name}`, 'HEAD');
  await updateState(ledger, run, {
    status,
    worktree_path: fs.realpathSync(wt),
    branch,
    ended_at: new Date(Date.now() - daysAgo * DAY).toISOString(),
  });
  return { ...run, wt, branch };
}

describe('agentbox gc', () => {
  it('removes worktrees, branches and checkpoints of MERGED and DISCARDED runs and of DONE fix runs (no change) only', async () => {
    const { repo, ledger } = ledgerRepo();
    const worktrees = scratchDir();
    const merged = await fixRun(ledger, repo.dir, worktrees, 'aaaaa1', 'MERGED', 1);
    const discarded = await fixRun(ledger, repo.dir, worktrees, 'aaaaa2', 'DISCARDED', 1);
    const review = await fixRun(ledger, repo.dir, worktrees, 'aaaaa3', 'REVIEW', 1);
    const crashed = await fixRun(ledger, repo.dir, worktrees, 'aaaaa4', 'CRASHED', 1);
    const aborted = await fixRun(ledger, repo.dir, worktrees, 'aaaaa5', 'ABORTED', 1);
    // A fix run that ended DONE changed nothing (one with a change ends in REVIEW): nothing waits in it.
    const done = await fixRun(ledger, repo.dir, worktrees, 'aaaaa6', 'DONE', 1);
    // A discard that already removed the worktree leaves nothing but the checkpoint here.
    git(repo.dir, 'worktree', 'remove', '--force', discarded.wt);
    git(repo.dir, 'branch', '-D', discarded.branch);

    const dry = await cli(repo.dir, ['gc', '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toBe(
      [
        // Newest run first, as agentbox status lists them.
        `would remove worktree ${fs.realpathSync(done.wt)} (${done.name})`,
        `would remove branch ${done.branch} (${done.name})`,
        `would remove checkpoint refs/agentbox/checkpoints/${done.name} (${done.name})`,
        `would remove checkpoint refs/agentbox/checkpoints/${discarded.name} (${discarded.name})`,
        `would remove worktree ${fs.realpathSync(merged.wt)} (${merged.name})`,
        `would remove branch ${merged.branch} (${merged.name})`,
        `would remove checkpoint refs/agentbox/checkpoints/${merged.name} (${merged.name})`,
        'dry run: nothing removed; would remove 2 worktree(s), 2 branch(es), 3 checkpoint(s), 0 run folder(s)',
        '',
      ].join('\n'),
    );
    expect(fs.existsSync(merged.wt)).toBe(true);

    const result = await cli(repo.dir, ['gc']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'gc removed 2 worktree(s), 2 branch(es), 3 checkpoint(s), 0 run folder(s)',
    );
    expect(fs.existsSync(merged.wt)).toBe(false);
    expect(fs.existsSync(done.wt)).toBe(false);
    expect(git(repo.dir, 'branch', '--list', 'agentbox/*')).not.toContain(merged.branch);
    for (const kept of [review, crashed, aborted]) {
      expect(fs.existsSync(kept.wt)).toBe(true);
      expect(git(repo.dir, 'branch', '--list', kept.branch)).toContain(kept.branch);
    }
    // Run folders stay without --older-than.
    expect(fs.readdirSync(ledger.runsDir)).toHaveLength(6);
    expect((await cli(repo.dir, ['gc'])).stdout).toBe('nothing to collect\n');
  });

  it('--older-than deletes folders of old finished runs, keeps REVIEW and recent ones, fixes the pointers', async () => {
    const { repo, ledger } = ledgerRepo();
    const worktrees = scratchDir();
    const oldCrash = await fixRun(ledger, repo.dir, worktrees, 'bbbbb1', 'CRASHED', 40);
    const oldReview = await fixRun(ledger, repo.dir, worktrees, 'bbbbb2', 'REVIEW', 40);
    const oldDone = await create(ledger, 'old scout', new Date(Date.now() - 45 * DAY).toISOString(), {
      ids: idSequence('bbbbb3'),
    });
    await updateState(ledger, oldDone, {
      status: 'DONE',
      ended_at: new Date(Date.now() - 45 * DAY).toISOString(),
    });
    const recent = await create(ledger, 'recent scout', new Date(Date.now() - DAY).toISOString(), {
      ids: idSequence('bbbbb4'),
    });
    await updateState(ledger, recent, { status: 'ABORTED' });
    expect(readLinkedRun(path.join(ledger.pointersDir, 'last-done'))).toBe(oldDone.name);
    // The private areas the crashed run and the one in review left (their agentbox was killed).
    const tmp = scratchDir();
    const base = privateBase({ TMPDIR: tmp }, process.getuid!());
    const [crashArea, reviewArea] = [oldCrash, oldReview].map((r) => createPrivateArea(base, r.name));

    const env = { ...process.env, TMPDIR: tmp };
    const result = await onBehalfOf(process.pid, env, () =>
      cli(repo.dir, ['gc', '--older-than', '30d', '--json']),
    );
    expect(result.stderr).toBe('');
    const out = JSON.parse(result.stdout);
    expect(out.kept_review).toEqual([oldReview.name]);
    expect(out.removed.map((i: { run: string; what: string }) => `${i.what} ${i.run}`).sort()).toEqual(
      [
        `branch ${oldCrash.name}`,
        `checkpoint ${oldCrash.name}`,
        `run_folder ${oldCrash.name}`,
        `run_folder ${oldDone.name}`,
        `worktree ${oldCrash.name}`,
      ].sort(),
    );
    expect(fs.readdirSync(ledger.runsDir).sort()).toEqual([oldReview.name, recent.name].sort());
    expect(fs.existsSync(oldCrash.wt)).toBe(false);
    expect(fs.existsSync(oldReview.wt)).toBe(true);
    // The collected run's private area is gone with it, its work folder too; the other's stays.
    for (const dir of [crashArea!.secretsDir, crashArea!.workDir, crashArea!.sockDir])
      expect(fs.existsSync(dir)).toBe(false);
    for (const dir of [reviewArea!.secretsDir, reviewArea!.workDir, reviewArea!.sockDir])
      expect(fs.existsSync(dir)).toBe(true);
    // The dashboard and the pointers forget the deleted runs.
    expect([...foldIndex(readIndexLog(ledger).events).keys()].sort()).toEqual(
      [oldReview.name, recent.name].sort(),
    );
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).not.toContain(oldDone.name);
    expect(fs.existsSync(path.join(ledger.pointersDir, 'last-done'))).toBe(false);
    expect(readLinkedRun(ledger.latest)).toBe(recent.name);
    const status = await cli(repo.dir, ['status', '--all', '--json']);
    expect(
      JSON.parse(status.stdout)
        .runs.map((r: { name: string }) => r.name)
        .sort(),
    ).toEqual([oldReview.name, recent.name].sort());
  });

  it('discard removes a crashed run’s private area, which its resume would have used', async () => {
    const { repo, ledger } = ledgerRepo();
    const crashed = await fixRun(ledger, repo.dir, scratchDir(), 'ccccc1', 'CRASHED', 1);
    const tmp = scratchDir();
    const area = createPrivateArea(privateBase({ TMPDIR: tmp }, process.getuid!()), crashed.name);
    area.writeSecret('model-key', 'sk-ant-secret');
    const env = { ...process.env, TMPDIR: tmp };
    const result = await onBehalfOf(process.pid, env, () => cli(repo.dir, ['discard', 'ccccc1']));
    expect(result.code, result.stderr).toBe(0);
    for (const dir of [area.secretsDir, area.workDir, area.sockDir]) expect(fs.existsSync(dir)).toBe(false);
    expect(fs.existsSync(crashed.wt)).toBe(false);
  });

  it('refuses a bad duration and changes nothing', async () => {
    const { repo } = ledgerRepo();
    const result = await cli(repo.dir, ['gc', '--older-than', 'a month']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--older-than "a month" is not a duration');
    expect(result.stderr).toContain('e.g. 30d');
  });
});
