import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unsettledReasons } from '../../src/gate/purge.js';
import { IGNORE_MARK, planIgnoreRemoval } from '../../src/git/ignore.js';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { type Ledger, type RunStatus, updateState } from '../../src/ledger/index.js';
import { processStartTime } from '../../src/process/reap.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { cli, create, idSequence, ledgerRepo, scratchDir } from './fixtures/ledger.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const agentboxRefs = (root: string) =>
  git(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/agentbox/', 'refs/agentbox/');
const worktreeList = (root: string) =>
  git(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '));

/** A fix run with a real worktree, branch and checkpoint, in `status`. */
async function fixRun(ledger: Ledger, root: string, worktrees: string, id: string, status: RunStatus) {
  const run = await create(ledger, `task ${id}`, new Date().toISOString(), {
    type: 'fix',
    ids: idSequence(id),
  });
  const wt = path.join(worktrees, run.name);
  const branch = `agentbox/${run.name}`;
  await addWorktree(root, { path: wt, branch, base: (await headSha(root))! });
  git(root, 'update-ref', `refs/agentbox/checkpoints/${run.name}`, 'HEAD');
  await updateState(ledger, run, { status, worktree_path: fs.realpathSync(wt), branch });
  return { ...run, wt: fs.realpathSync(wt), branch };
}

/** An initialised repository (shared install, committed) with its ledger. */
async function installed() {
  const { repo, ledger } = ledgerRepo();
  expect((await cli(repo.dir, ['init'])).code).toBe(0);
  repo.commit('agentbox init');
  return { repo, ledger };
}

describe('planIgnoreRemoval', () => {
  const block = (...lines: string[]) => `${IGNORE_MARK}\n${lines.join('\n')}\n`;
  const known = ['.agents/', '.claude/commands/run_*/', 'agentbox.yaml'];
  it.each<
    [string, { shared?: string; local?: string }, string[], { shared: string | null; local: string | null }]
  >([
    [
      'nothing kept: both blocks go',
      { shared: `node_modules/\n\n${block('.agents/', '.claude/commands/run_*/')}`, local: '# x\n' },
      [],
      { shared: 'node_modules/\n', local: null },
    ],
    [
      'a kept ledger moves from the shared file to the local one',
      { shared: block('.agents/', '.claude/commands/run_*/'), local: '# x\n' },
      ['.agents/'],
      { shared: '', local: `# x\n\n${block('.agents/')}` },
    ],
    [
      'a kept ledger stays in the local block, under the mark',
      { local: `# x\n\n${block('.agents/', '.claude/commands/run_*/', 'agentbox.yaml')}` },
      ['.agents/'],
      { shared: null, local: `# x\n\n${block('.agents/')}` },
    ],
    [
      'a second run changes nothing',
      { local: `# x\n\n${block('.agents/')}` },
      ['.agents/'],
      { shared: null, local: null },
    ],
    [
      'no local file yet: it is made',
      { shared: block('.agents/', '.claude/commands/run_*/') },
      ['.agents/', '.claude/commands/run_*/'],
      { shared: '', local: block('.agents/', '.claude/commands/run_*/') },
    ],
    [
      'a ledger the user ignores by their own line moves nothing',
      { shared: '.agents\n', local: '# x\n' },
      ['.agents/'],
      { shared: null, local: null },
    ],
  ])('%s', (_label, files, keep, expected) => {
    const edits = planIgnoreRemoval({ shared: files.shared, local: files.local }, known, keep);
    expect({ shared: edits.shared?.text ?? null, local: edits.local?.text ?? null }).toEqual(expected);
  });
});

describe('unsettledReasons', () => {
  const none = { uncommitted: 0, ownCommits: 0, patchBytes: 0 };
  it.each<[string, Parameters<typeof unsettledReasons>[0], string[]]>([
    ['merged: in the repository', { ...none, status: 'MERGED', uncommitted: 3, patchBytes: 10 }, []],
    ['discarded: given up', { ...none, status: 'DISCARDED', ownCommits: 2 }, []],
    ['a scout that is done', { ...none, status: 'DONE' }, []],
    [
      'waiting for review',
      { ...none, status: 'REVIEW', uncommitted: 2 },
      ['its changes wait for review (REVIEW)', '2 changed file(s) in its worktree'],
    ],
    [
      'crashed with a patch',
      { ...none, status: 'CRASHED', patchBytes: 120 },
      ['its changes.patch was never merged (CRASHED)'],
    ],
    [
      'a leftover with commits of its own',
      { ...none, status: null, ownCommits: 1 },
      ['1 commit(s) on no other branch'],
    ],
  ])('%s', (_label, facts, expected) => {
    expect(unsettledReasons(facts)).toEqual(expected);
  });
});

describe('agentbox uninstall keeps a kept ledger ignored', () => {
  it('moves .agents/ to .git/info/exclude; the committed .gitignore is as before init; purge takes it out', async () => {
    const { repo, ledger } = ledgerRepo();
    const before = repo.read('.git/info/exclude');
    await cli(repo.dir, ['init']);
    const result = await cli(repo.dir, ['uninstall']);
    expect(result.code).toBe(0);
    expect(repo.exists('.gitignore')).toBe(false);
    expect(repo.read('.git/info/exclude')).toBe(`${before}\n${IGNORE_MARK}\n.agents/\n`);
    expect(result.stdout).toContain('moved .agents/ to .git/info/exclude');
    expect(result.stdout).toContain('kept .agents/ with your runs (still ignored by git)');
    // git agrees: the ledger is not something to commit.
    fs.writeFileSync(path.join(ledger.runsDir, 'probe'), 'x');
    expect(git(repo.dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');

    const again = await cli(repo.dir, ['uninstall']);
    expect(again.stdout).toBe(
      `agentbox is not installed in ${repo.dir} — nothing to uninstall.\n` +
        '  kept .agents/ with your runs (still ignored by git) — "agentbox uninstall --purge" deletes it\n',
    );
    const purged = await cli(repo.dir, ['uninstall', '--purge']);
    expect(purged.stdout).toContain('removed .agents/ from .git/info/exclude');
    expect(repo.read('.git/info/exclude')).toBe(before);
    expect(repo.exists('.agents')).toBe(false);
    expect((await cli(repo.dir, ['uninstall', '--purge'])).stdout).toContain('nothing to uninstall');
  });

  it('init again puts .agents/ back in the committed .gitignore, out of the exclude file (it stayed only there: a teammate’s clone did not ignore the ledger)', async () => {
    const { repo } = ledgerRepo();
    const before = repo.read('.git/info/exclude');
    await cli(repo.dir, ['init']);
    const first = repo.read('.gitignore');
    await cli(repo.dir, ['uninstall']);
    const again = await cli(repo.dir, ['init']);
    expect(again.code, again.stderr).toBe(0);
    expect(repo.read('.gitignore')).toBe(first);
    expect(repo.read('.git/info/exclude')).toBe(before);
    expect(again.stdout).toContain('moved .agents/ from .git/info/exclude back to the shared ignore file');
    // And once more: nothing to do, nothing moved.
    expect((await cli(repo.dir, ['init'])).stdout).toContain('nothing changed');
    // `init --local` keeps it in this clone only, as before.
    await cli(repo.dir, ['uninstall']);
    await cli(repo.dir, ['init', '--local']);
    expect(repo.exists('.gitignore')).toBe(false);
    expect(repo.read('.git/info/exclude')).toContain('.agents/');
  });

  it('says what it left in git and how to remove it', async () => {
    const { repo, ledger } = await installed();
    await fixRun(ledger, repo.dir, scratchDir(), 'aaaaa1', 'MERGED');
    const result = await cli(repo.dir, ['uninstall']);
    expect(result.stdout).toContain(
      'kept 1 worktree(s), 1 branch(es), 1 ref(s) of runs — "agentbox uninstall --purge" removes them (listed first), "agentbox gc" those of settled runs (merged, discarded, a fix with no change)',
    );
  });

  it('--force without --purge is a usage error', async () => {
    const { repo } = await installed();
    const result = await cli(repo.dir, ['uninstall', '--force']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--force only goes with --purge');
  });
});

describe('agentbox uninstall --purge', () => {
  it('lists, then removes every worktree, branch and ref agentbox made, leftovers of runs the ledger lost included', async () => {
    const { repo, ledger } = await installed();
    const worktrees = scratchDir();
    const merged = await fixRun(ledger, repo.dir, worktrees, 'aaaaa1', 'MERGED');
    const discarded = await fixRun(ledger, repo.dir, worktrees, 'aaaaa2', 'DISCARDED');
    const lost = await fixRun(ledger, repo.dir, worktrees, 'aaaaa3', 'DONE');
    // The ledger no longer knows this run (gc cannot find it), but git still has its traces.
    fs.rmSync(lost.dir, { recursive: true });
    // What the person made stays: a branch under agentbox/ that is not a run's, and a worktree.
    git(repo.dir, 'branch', 'agentbox/mine');
    const own = path.join(worktrees, 'own');
    git(repo.dir, 'worktree', 'add', '--quiet', '-b', 'feature', own);
    const result = await cli(repo.dir, ['uninstall', '--purge']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const listing = result.stdout.slice(0, result.stdout.indexOf('✓'));
    for (const run of [merged, discarded, lost]) {
      expect(listing).toContain(`worktree ${run.wt} (${run.name.slice(-6)})`);
      expect(listing).toContain(`branch   ${run.branch}\n`);
      expect(listing).toContain(`ref      refs/agentbox/checkpoints/${run.name}\n`);
    }
    expect(result.stdout).toContain('removed 3 worktree(s), 3 branch(es), 3 ref(s) agentbox made');
    expect(result.stdout).toContain('deleted .agents/ and every run in it (2 run(s))');
    expect(agentboxRefs(repo.dir)).toBe('refs/heads/agentbox/mine');
    expect(worktreeList(repo.dir)).toEqual([`worktree ${repo.dir}`, `worktree ${fs.realpathSync(own)}`]);
    for (const run of [merged, discarded, lost]) expect(fs.existsSync(run.wt)).toBe(false);
    expect(repo.exists('.agents')).toBe(false);
    expect(git(repo.dir, 'status', '--porcelain')).toBe(
      ' D .claude/settings.json\n D .gitignore\n D agentbox.yaml'.trim(),
    );
    const again = await cli(repo.dir, ['uninstall', '--purge']);
    expect(again.stdout).toBe(`agentbox is not installed in ${repo.dir} — nothing to uninstall.\n`);
  });

  it("removes the data folder it made once empty: never one holding another repository's worktrees, never the data folder itself (issue 29)", async () => {
    const { repo, ledger } = await installed();
    const data = scratchDir();
    const mine = path.join(data, 'agentbox', 'worktrees', 'repo-0badc0de');
    const other = path.join(data, 'agentbox', 'worktrees', 'other-1234abcd');
    fs.mkdirSync(path.join(other, 'a-run'), { recursive: true });
    const first = await fixRun(ledger, repo.dir, mine, 'ddddd1', 'MERGED');
    const purged = await cli(repo.dir, ['uninstall', '--purge']);
    expect(purged.code).toBe(0);
    expect(purged.stdout).toContain(`  removed worktree ddddd1 (1/3, `);
    expect(purged.stdout).toMatch(/^ {2}removed ref refs\/agentbox\/checkpoints\/\S+ \(3\/3, \d+\.\d s\)$/m);
    expect(fs.existsSync(first.wt)).toBe(false);
    expect(fs.existsSync(mine)).toBe(false);
    expect(fs.readdirSync(path.join(data, 'agentbox', 'worktrees'))).toEqual(['other-1234abcd']);

    fs.rmSync(other, { recursive: true });
    expect((await cli(repo.dir, ['init'])).code).toBe(0);
    await fixRun(ledger, repo.dir, mine, 'ddddd2', 'MERGED');
    expect((await cli(repo.dir, ['uninstall', '--purge'])).code).toBe(0);
    expect(fs.readdirSync(data)).toEqual([]);
  });

  it('refuses, changing nothing, while that would lose changes; --force deletes them and says so', async () => {
    const { repo, ledger } = await installed();
    const worktrees = scratchDir();
    const review = await fixRun(ledger, repo.dir, worktrees, 'bbbbb1', 'REVIEW');
    fs.writeFileSync(path.join(review.wt, 'README.md'), 'changed\n');
    const crashed = await fixRun(ledger, repo.dir, worktrees, 'bbbbb2', 'CRASHED');
    fs.writeFileSync(path.join(crashed.wt, 'new.txt'), 'new\n');
    // The run's own notes folder is not work that would be lost (it is filed into the ledger).
    const done = await fixRun(ledger, repo.dir, worktrees, 'bbbbb3', 'DONE');
    fs.mkdirSync(path.join(done.wt, '.agentbox-run'));
    fs.writeFileSync(path.join(done.wt, '.agentbox-run', 'notes.md'), 'n\n');
    // A commit the agent made on its branch, on no other branch.
    const committed = await fixRun(ledger, repo.dir, worktrees, 'bbbbb4', 'ABORTED');
    fs.writeFileSync(path.join(committed.wt, 'c.txt'), 'c\n');
    git(committed.wt, 'add', 'c.txt');
    execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'c'], {
      cwd: committed.wt,
    });

    const before = snapshotTree(repo.dir, { skip: [] });
    const refsBefore = agentboxRefs(repo.dir);
    const result = await cli(repo.dir, ['uninstall', '--purge']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        'agentbox: --purge would lose changes that exist nowhere else (nothing was removed):',
        `    bbbbb4  ${committed.name}: 1 commit(s) on no other branch`,
        `    bbbbb2  ${crashed.name}: 1 changed file(s) in its worktree`,
        `    bbbbb1  ${review.name}: its changes wait for review (REVIEW); 1 changed file(s) in its worktree`,
        '  → merge or discard each first (agentbox merge bbbbb4 / agentbox discard bbbbb4), or delete them too: agentbox uninstall --purge --force',
        '',
      ].join('\n'),
    );
    expect(snapshotTree(repo.dir, { skip: [] })).toEqual(before);
    expect(agentboxRefs(repo.dir)).toBe(refsBefore);
    expect(fs.readFileSync(path.join(review.wt, 'README.md'), 'utf8')).toBe('changed\n');

    const forced = await cli(repo.dir, ['uninstall', '--purge', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(
      `deleted the unmerged changes of bbbbb1 (--force): its changes wait for review`,
    );
    expect(forced.stdout).toContain('removed 4 worktree(s), 4 branch(es), 4 ref(s) agentbox made');
    expect(agentboxRefs(repo.dir)).toBe('');
    expect(worktreeList(repo.dir)).toEqual([`worktree ${repo.dir}`]);
  });

  it('refuses while a run is running', async () => {
    const { repo, ledger } = await installed();
    const run = await create(ledger, 'still going', new Date().toISOString(), { ids: idSequence('ccccc1') });
    await updateState(ledger, run, {
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      last_heartbeat: new Date().toISOString(),
    });
    const before = snapshotTree(repo.dir, { skip: [] });
    const result = await cli(repo.dir, ['uninstall', '--purge', '--force']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('agentbox: cannot purge: 1 run(s) still running (ccccc1)');
    expect(result.stderr).toContain('agentbox stop ccccc1');
    expect(snapshotTree(repo.dir, { skip: [] })).toEqual(before);
  });
});
