import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/run.js';
import { type CommandContext, memoryIo } from '../../src/context.js';
import { exportPatch } from '../../src/git/patch.js';
import { addWorktree } from '../../src/git/worktree.js';
import { attemptToMerge, settleGroup } from '../../src/group/merge.js';
import { type Candidate, chooseAttempt, type Ranked } from '../../src/group/merge-select.js';
import { pointedGroup } from '../../src/group/pointed.js';
import { createGroup, readGroup, updateGroupState } from '../../src/group/store.js';
import { createRun, type Ledger, type RunStatus, readRun, updateState } from '../../src/ledger/index.js';
import { processStartTime } from '../../src/process/reap.js';
import { GIT_ENV, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE, ledgerRepo } from './fixtures/ledger.js';

const c = (attempt: number, status: RunStatus | null, verified: boolean | null): Candidate => ({
  attempt,
  run: status === null ? null : `run-${attempt}`,
  status,
  verified,
  place: 0,
  reason: '',
});
/** `order` placed 1, 2, 3…, except the `tied` attempts, which share the first one's place. */
const ranked = (order: Candidate[], tied: number[] = []): Ranked => {
  const shared = order.findIndex((x) => tied.includes(x.attempt)) + 1;
  return { order: order.map((x, i) => ({ ...x, place: tied.includes(x.attempt) ? shared : i + 1 })) };
};

describe('chooseAttempt: the best passing attempt', () => {
  it.each<[string, Ranked, string]>([
    ['the first in the order that passed', ranked([c(3, 'REVIEW', true), c(1, 'REVIEW', true)]), 'pick 3'],
    [
      'a better-ranked one that failed runs.verify is passed over',
      ranked([c(1, 'REVIEW', false), c(2, 'REVIEW', true)]),
      'pick 2',
    ],
    [
      'REVIEW without runs.verify is not passing',
      ranked([c(1, 'REVIEW', null), c(2, 'REVIEW', true)]),
      'pick 2',
    ],
    [
      'verified but not REVIEW (DONE: nothing to merge)',
      ranked([c(1, 'DONE', true), c(2, 'REVIEW', true)]),
      'pick 2',
    ],
    ['not started', ranked([c(1, null, null), c(2, 'REVIEW', true)]), 'pick 2'],
    ['a tie among the best asks', ranked([c(2, 'REVIEW', true), c(4, 'REVIEW', true)], [2, 4]), 'tie 2,4'],
    [
      'a tie with one that did not pass is no tie',
      ranked([c(2, 'REVIEW', true), c(4, 'REVIEW', false)], [2, 4]),
      'pick 2',
    ],
    [
      'a tie among attempts that did not pass does not touch the passing one',
      ranked([c(1, 'ABORTED', null), c(2, 'FAILED', null), c(3, 'REVIEW', true)], [1, 2]),
      'pick 3',
    ],
    [
      'a tie behind a better-placed attempt that did not pass still asks',
      ranked([c(1, 'DONE', true), c(2, 'REVIEW', true), c(3, 'REVIEW', true)], [2, 3]),
      'tie 2,3',
    ],
    ['none passed', ranked([c(1, 'REVIEW', false), c(2, 'ABORTED', null)]), 'none'],
    // The person revised an attempt: their choice, over the ranking (QA: merge <group> merged the
    // ranking's attempt 1 and discarded attempt 2, the one revised).
    [
      'the attempt the person revised, over a better-ranked one',
      ranked([c(1, 'REVIEW', true), { ...c(2, 'REVIEW', true), revised: 2 }]),
      'pick 2',
    ],
    [
      'a revised attempt that did not pass: none, never another',
      ranked([c(1, 'REVIEW', true), { ...c(2, 'REVIEW', false), revised: 3 }]),
      'none',
    ],
    [
      'two revised attempts that passed tie, whatever their places',
      ranked([
        c(1, 'REVIEW', true),
        { ...c(2, 'REVIEW', true), revised: 2 },
        { ...c(3, 'REVIEW', true), revised: 2 },
      ]),
      'tie 2,3',
    ],
  ])('%s', (_name, input, expected) => {
    const choice = chooseAttempt(input);
    const got =
      choice.kind === 'pick'
        ? `pick ${choice.attempt.attempt}`
        : choice.kind === 'tie'
          ? `tie ${choice.attempts.map((a) => a.attempt).join(',')}`
          : 'none';
    expect(got).toBe(expected);
  });
});

/** An attempt as a finished run leaves it: worktree, branch, changes.patch, state. */
interface Fake {
  readonly status: RunStatus;
  readonly verified: boolean | null;
  /** What it writes in its worktree. */
  readonly files: Record<string, string>;
}

async function fakeGroup(attempts: Fake[], options: { active?: boolean; waiting?: boolean } = {}) {
  const { repo, ledger } = ledgerRepo();
  repo.write('.gitignore', '.agents/\n');
  const base = repo.commit('ignore the ledger');
  const group = await createGroup(ledger, {
    task: 'fix the login',
    attempts: attempts.length,
    models: null,
    maxParallel: attempts.length,
    firstPass: false,
    maxCostUsd: null,
    runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 50, model: null },
    repoShaStart: base,
  });
  const worktrees = tempDir('agentbox-wt-');
  const runs: string[] = [];
  for (const [i, a] of attempts.entries()) {
    const handle = await createRun(ledger, {
      type: 'fix',
      task: 'fix the login',
      envelope: ENVELOPE,
      repoShaStart: base,
      options: {
        group: { id: group.meta.group_id, name: group.name, attempt: i + 1, attempts: attempts.length },
      },
    });
    const wt = path.join(worktrees, handle.name);
    const branch = `agentbox/${handle.name}`;
    await addWorktree(repo.dir, { path: wt, branch, base });
    for (const [file, content] of Object.entries(a.files)) fs.writeFileSync(path.join(wt, file), content);
    const { patch } = await exportPatch(wt, { base });
    fs.writeFileSync(path.join(handle.dir, 'changes.patch'), patch);
    await updateState(ledger, handle, {
      status: a.status,
      worktree_path: fs.realpathSync(wt),
      branch,
      // Every attempt took no time: the ranking's last key (duration) never tells them apart.
      ended_at: handle.state.started_at,
      output: { applied: true, violations: 0, corrections: 0, verified: a.verified } as never,
    });
    runs.push(handle.name);
  }
  await updateGroupState(ledger, group.name, () => ({
    status: options.active ? 'ACTIVE' : 'ENDED',
    pid: options.active ? process.pid : null,
    pid_start: options.active ? processStartTime(process.pid) : null,
    members: group.state.members.map((m, i) => ({ ...m, run: options.waiting && i === 2 ? null : runs[i]! })),
  }));
  return { repo, ledger, group: readGroup(ledger, group.name), runs };
}

async function agentbox(repo: TestRepo, argv: string[], answers?: string[]) {
  const io = memoryIo(answers ? { answers } : {});
  const ctx: CommandContext = { cwd: repo.dir, env: {}, io };
  const code = await run(argv, ctx);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const branches = (repo: TestRepo) =>
  repo.git('branch', '--list', '--format=%(refname:short)', 'agentbox/*').trim();
const status = (ledger: Ledger, name: string) => readRun(ledger, name).state?.status;

/** Three attempts: 1 fails runs.verify, 2 passes, 3 ended ABORTED. Each writes its own file. */
const threeAttempts = (): Fake[] => [
  { status: 'REVIEW', verified: false, files: { 'one.txt': 'one\n' } },
  { status: 'REVIEW', verified: true, files: { 'two.txt': 'two\n' } },
  { status: 'ABORTED', verified: null, files: { 'three.txt': 'three\n' } },
];

describe('merge <group> and discard <group>', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('takes the passing attempt, then discards the others and keeps every patch', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const result = await agentbox(repo, ['merge', group.meta.group_id, '--yes']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `group ${group.meta.group_id}: attempt 2 of 3 (REVIEW, runs.verify passed)`,
    );
    expect(result.stdout).toContain(
      `group ${group.meta.group_id} merged (attempt 2); discarded attempt(s) 1, 3`,
    );
    // The main tree has exactly the winner's change.
    expect(repo.git('status', '--porcelain').trim()).toBe('?? two.txt');
    expect(repo.read('two.txt')).toBe('two\n');
    expect(runs.map((r) => status(ledger, r))).toEqual(['DISCARDED', 'MERGED', 'DISCARDED']);
    // The others' worktrees and branches are gone; the winner's stay (as after `merge <run>`).
    expect(branches(repo)).toBe(`agentbox/${runs[1]}`);
    for (const i of [0, 2])
      expect(fs.existsSync(readRun(ledger, runs[i]!).state!.worktree_path!)).toBe(false);
    const report = fs.readFileSync(path.join(group.dir, 'report.md'), 'utf8');
    expect(report).toContain(`Merged: attempt 2 (\`${runs[1]}\`).`);
    expect(report).toContain('agent_3.patch');
    const after = readGroup(ledger, group.name).state;
    expect(after.status).toBe('MERGED');
    expect(after.merged).toMatchObject({ attempt: 2, run: runs[1] });
    for (const k of [1, 2, 3])
      expect(fs.readFileSync(path.join(group.dir, 'patches', `agent_${k}.patch`), 'utf8')).toBe(
        fs.readFileSync(path.join(ledger.runsDir, runs[k - 1]!, 'changes.patch'), 'utf8'),
      );
    // A discard after the merge says what the merge did, not "✓ merged" again; it names how the
    // merged attempt's worktree goes.
    const discard = await agentbox(repo, ['discard', group.meta.group_id]);
    expect(discard.code).toBe(0);
    expect(discard.stdout).toContain(
      `group ${group.meta.group_id} was merged (attempt 2): its other attempts are discarded; the merged attempt's worktree and branch go with: agentbox discard ${runs[1]!.slice(-6)}`,
    );
    expect(discard.stdout).not.toContain('✓');
    expect(readGroup(ledger, group.name).state.status).toBe('MERGED');
    // Decided once: a second merge says so.
    const again = await agentbox(repo, ['merge', group.meta.group_id, '--yes']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`group ${group.name} is already merged (attempt 2, run ${runs[1]})`);
  });

  it('without a terminal and without --yes: the hint names the group and its attempt, not the run (issue 38 item 8)', async () => {
    const { repo, group } = await fakeGroup(threeAttempts());
    const result = await agentbox(repo, ['merge', group.meta.group_id]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('refusing to merge without a confirmation');
    expect(result.stderr).toContain(`agentbox merge ${group.meta.group_id} --attempt 2 --yes`);
    expect(repo.git('status', '--porcelain').trim()).toBe('');
  });

  it('an attempt named by its own run id merges as --attempt k of its group', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const result = await agentbox(repo, ['merge', runs[0]!.slice(-6)], ['y']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('✗ this run did not pass');
    expect(result.code).toBe(0);
    expect(repo.git('status', '--porcelain').trim()).toBe('?? one.txt');
    expect(readGroup(ledger, group.name).state.merged).toMatchObject({ attempt: 1, run: runs[0] });
    expect(runs.map((r) => status(ledger, r))).toEqual(['MERGED', 'DISCARDED', 'DISCARDED']);
  });

  it('a run that only claims to be an attempt (its group does not list it) merges as a run of its own', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const forged = await createRun(ledger, {
      type: 'fix',
      task: 'a run that says it is attempt 2',
      envelope: ENVELOPE,
      repoShaStart: null,
      options: { group: { id: group.meta.group_id, name: group.name, attempt: 2, attempts: 3 } },
    });
    fs.copyFileSync(
      path.join(ledger.runsDir, runs[1]!, 'changes.patch'),
      path.join(forged.dir, 'changes.patch'),
    );
    await updateState(ledger, forged, { status: 'REVIEW' });
    expect(readRun(ledger, forged.name).state?.summary?.group?.attempt).toBe(2);
    const result = await agentbox(repo, ['merge', forged.id, '--yes', '--json']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).not.toHaveProperty('group');
    expect(runs.map((r) => status(ledger, r))).toEqual(['REVIEW', 'REVIEW', 'ABORTED']);
    expect(readGroup(ledger, group.name).state.status).toBe('ENDED');
  });

  it('--attempt k: that attempt, through the same gate (--yes needs --force when it did not pass)', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const id = group.meta.group_id;
    const refused = await agentbox(repo, ['merge', id, '--attempt', '1', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`refusing to merge ${runs[0]} with --yes: it did not pass`);
    for (const [arg, message] of [
      ['3', `attempt 3 of group ${id} cannot be merged: ABORTED`],
      ['4', `--attempt 4: group ${id} has attempts 1 to 3`],
      ['x', '--attempt "x" is not an attempt number'],
    ] as const) {
      const bad = await agentbox(repo, ['merge', id, '--attempt', arg, '--yes']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(message);
    }
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    expect(runs.map((r) => status(ledger, r))).toEqual(['REVIEW', 'REVIEW', 'ABORTED']);
    const forced = await agentbox(repo, ['merge', id, '--attempt', '1', '--yes', '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      run: runs[0],
      status: 'MERGED',
      group: group.name,
      attempt: 1,
      group_status: 'MERGED',
      discarded: [runs[1], runs[2]],
    });
  });

  it('a tie among the best passing attempts asks which; without a terminal, or with --yes, it is an error', async () => {
    const tied = (): Fake[] => [
      { status: 'REVIEW', verified: true, files: { 'one.txt': 'one\n' } },
      { status: 'REVIEW', verified: true, files: { 'two.txt': 'two\n' } },
      { status: 'REVIEW', verified: false, files: { 'three.txt': 'three\n' } },
    ];
    const { repo, ledger, group } = await fakeGroup(tied());
    const id = group.meta.group_id;
    // `latest` lands on the last attempt made: it means the group (merge latest --yes took attempt 3
    // of a tie and discarded the others, found by a user's eye).
    for (const argv of [
      ['merge', id],
      ['merge', id, '--yes'],
      ['merge', 'latest', '--yes'],
    ]) {
      const result = await agentbox(repo, argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toContain(`attempts 1, 2 of group ${id} tie for the best: choose one`);
      expect(result.stderr).toContain(`agentbox merge ${id} --attempt 1 or agentbox merge ${id} --attempt 2`);
    }
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    const none = await agentbox(repo, ['merge', id], ['']);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('Nothing changed.');
    expect(readGroup(ledger, group.name).state.status).toBe('ENDED');
    const asked = await agentbox(repo, ['merge', id], ['2', 'y']);
    expect(asked.stderr).toBe('');
    expect(asked.stdout).toContain(`These attempts of group ${id} tie for the best`);
    expect(asked.stdout).toContain('Which attempt do you merge? [1/2, empty = none]');
    expect(asked.code).toBe(0);
    expect(repo.git('status', '--porcelain').trim()).toBe('?? two.txt');
    expect(readGroup(ledger, group.name).state.merged).toMatchObject({ attempt: 2 });
  });

  it('no passing attempt: an error naming each one and --attempt; nothing changed', async () => {
    const { repo, group, runs } = await fakeGroup([
      { status: 'REVIEW', verified: false, files: { 'a.txt': 'a\n' } },
      { status: 'REVIEW', verified: null, files: { 'b.txt': 'b\n' } },
      { status: 'FAILED', verified: null, files: { 'c.txt': 'c\n' } },
    ]);
    const before = snapshotTree(repo.dir, { skip: ['.git'] });
    const result = await agentbox(repo, ['merge', group.meta.group_id]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      [
        `no attempt of group ${group.meta.group_id} passed (REVIEW with runs.verify passed):`,
        '  attempt 1: REVIEW, runs.verify failed',
        '  attempt 2: REVIEW, no runs.verify ran',
        '  attempt 3: FAILED',
      ].join('\n'),
    );
    expect(result.stderr).toContain(`agentbox merge ${group.meta.group_id} --attempt 2`);
    expect(snapshotTree(repo.dir, { skip: ['.git'] })).toEqual(before);
    expect(branches(repo).split('\n')).toHaveLength(runs.length);
  });

  it('refuses a group still running, and names agentbox stop', async () => {
    const { repo, group } = await fakeGroup(threeAttempts(), { active: true, waiting: true });
    const before = snapshotTree(repo.dir, { skip: ['.git'] });
    for (const command of ['merge', 'discard']) {
      const result = await agentbox(repo, [
        command,
        group.meta.group_id,
        ...(command === 'merge' ? ['--yes'] : []),
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`group ${group.name} is still running: attempt(s) 3 wait their turn`);
      expect(result.stderr).toContain(`agentbox stop ${group.meta.group_id}`);
    }
    expect(snapshotTree(repo.dir, { skip: ['.git'] })).toEqual(before);
    // Every attempt ended, but the group's process has not finished with its state yet.
    const ending = await fakeGroup(threeAttempts(), { active: true });
    const result = await agentbox(ending.repo, ['merge', ending.group.meta.group_id, '--yes']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`is still running: its process (pid ${process.pid}) is ending it`);
  });

  it('a merge interrupted before the group was settled is finished by merge <group> again', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    // As a crash right after the run merge leaves it: attempt 2 MERGED, the group not yet.
    await updateState(ledger, runs[1]!, { status: 'MERGED' });
    const result = await agentbox(repo, ['merge', group.meta.group_id, '--yes']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `group ${group.meta.group_id} merged (attempt 2); discarded attempt(s) 1, 3`,
    );
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    expect(runs.map((r) => status(ledger, r))).toEqual(['DISCARDED', 'MERGED', 'DISCARDED']);
    expect(readGroup(ledger, group.name).state).toMatchObject({ status: 'MERGED', merged: { attempt: 2 } });
  });

  it('--mark-merged on a group: the attempt recorded merged by hand, then the group settled', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const id = group.meta.group_id;
    const bad = await agentbox(repo, ['merge', id, '--mark-merged', '--yes']);
    expect(bad.code).toBe(2);
    expect(runs.map((r) => status(ledger, r))).toEqual(['REVIEW', 'REVIEW', 'ABORTED']);
    const result = await agentbox(repo, ['merge', id, '--mark-merged']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`recorded ${runs[1]} as merged (by hand; nothing was applied)`);
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    expect(runs.map((r) => status(ledger, r))).toEqual(['DISCARDED', 'MERGED', 'DISCARDED']);
    expect(readGroup(ledger, group.name).state).toMatchObject({ status: 'MERGED', merged: { attempt: 2 } });
  });

  it("attemptToMerge (the web UI's checks): attempt k of an ended, undecided group, in REVIEW", async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    expect(attemptToMerge(repo.dir, ledger, group, 1).name).toBe(runs[0]);
    expect(() => attemptToMerge(repo.dir, ledger, group, 3)).toThrow('cannot be merged: ABORTED');
    await settleGroup(repo.dir, ledger, group, null);
    expect(() => attemptToMerge(repo.dir, ledger, readGroup(ledger, group.name), 1)).toThrow('was discarded');
  });

  it('a merge that conflicts leaves everything as it was', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    repo.write('two.txt', 'mine\n');
    repo.commit('two.txt of my own');
    const before = { tree: snapshotTree(repo.dir, { skip: ['.git'] }), branches: branches(repo) };
    const result = await agentbox(repo, ['merge', group.meta.group_id, '--yes']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('do not apply');
    expect({ tree: snapshotTree(repo.dir, { skip: ['.git'] }), branches: branches(repo) }).toEqual(before);
    expect(runs.map((r) => status(ledger, r))).toEqual(['REVIEW', 'REVIEW', 'ABORTED']);
    expect(readGroup(ledger, group.name).state.status).toBe('ENDED');
  });

  it('discard <group>: every attempt discarded, the group DISCARDED, the patches kept; twice is harmless', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    const result = await agentbox(repo, ['discard', group.meta.group_id]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`group ${group.meta.group_id} discarded; discarded attempt(s) 1, 2, 3`);
    expect(branches(repo)).toBe('');
    expect(runs.map((r) => status(ledger, r))).toEqual(['DISCARDED', 'DISCARDED', 'DISCARDED']);
    expect(readGroup(ledger, group.name).state.status).toBe('DISCARDED');
    expect(fs.readdirSync(path.join(group.dir, 'patches')).sort()).toEqual([
      'agent_1.patch',
      'agent_2.patch',
      'agent_3.patch',
    ]);
    const again = await agentbox(repo, ['discard', group.meta.group_id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('was already discarded: nothing more to do');
    // Not then "✓ discarded" as if it had just been done (found by a user's eye).
    expect(again.stdout).not.toContain('✓');
    const merge = await agentbox(repo, ['merge', group.meta.group_id]);
    expect(merge.stderr).toContain(`group ${group.name} was discarded`);
  });

  it('latest lands on the last attempt made: discard latest and stop latest mean its group; an attempt’s own id, that attempt', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    expect(pointedGroup(ledger, 'latest')).toBe(group.name);
    expect(pointedGroup(ledger, runs[2]!.slice(-6))).toBeNull();
    expect(pointedGroup(ledger, 'last-nothing')).toBeNull();
    const result = await agentbox(repo, ['discard', 'latest']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`group ${group.meta.group_id} discarded; discarded attempt(s) 1, 2, 3`);
    expect(readGroup(ledger, group.name).state.status).toBe('DISCARDED');
    expect(runs.map((r) => status(ledger, r))).toEqual(['DISCARDED', 'DISCARDED', 'DISCARDED']);
    // stop takes the same way (src/group/open.ts): the group, which has ended.
    const stopped = await agentbox(repo, ['stop', 'latest']);
    expect(stopped.stdout + stopped.stderr).toContain(`group ${group.name}`);
  });

  it('the human gate: merge and discard of a group refused inside a run, and recorded there', async () => {
    const { repo, ledger, group } = await fakeGroup(threeAttempts());
    const runDir = tempDir('agentbox-caller-');
    for (const argv of [
      ['merge', group.meta.group_id, '--yes'],
      ['merge', group.name, '--attempt', '2', '--yes'],
      ['discard', group.meta.group_id],
    ]) {
      const io = memoryIo();
      const env = { AGENTBOX_RUN: '26-01-02_0304__hostile__0f0f0f', AGENTBOX_RUN_DIR: runDir };
      const code = await run(argv, { cwd: repo.dir, env, io });
      expect(code).toBe(1);
      expect(io.stderr).toContain(`agentbox ${argv[0]} is the human gate`);
    }
    const refusals = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n');
    expect(refusals.map((l) => JSON.parse(l).event)).toEqual(Array(3).fill('human_gate_refused'));
    expect(readGroup(ledger, group.name).state.status).toBe('ENDED');
  });
});

describe('gc with groups', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('removes a group folder with --older-than only once none of its runs is left; its patches stay until then', async () => {
    const { repo, ledger, group, runs } = await fakeGroup(threeAttempts());
    expect((await agentbox(repo, ['discard', group.meta.group_id])).code).toBe(0);
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const age = async (names: string[]) => {
      for (const name of names) await updateState(ledger, name, { ended_at: longAgo });
    };
    await updateGroupState(ledger, group.name, () => ({ ended_at: longAgo }));
    await age([runs[0]!, runs[1]!]);
    // Without --older-than nothing of the group goes.
    expect((await agentbox(repo, ['gc'])).stdout).not.toContain('group folder');
    const first = await agentbox(repo, ['gc', '--older-than', '30d']);
    expect(first.stdout).toContain('2 run folder(s)');
    expect(first.stdout).not.toContain('group folder');
    expect(fs.readdirSync(path.join(group.dir, 'patches'))).toHaveLength(3);
    await age([runs[2]!]);
    const dry = await agentbox(repo, ['gc', '--older-than', '30d', '--dry-run']);
    expect(dry.stdout).toContain(`would remove group folder .agents/groups/${group.name}\n`);
    expect(dry.stdout).toContain('1 run folder(s), 1 group folder(s)');
    expect(fs.existsSync(group.dir)).toBe(true);
    const second = await agentbox(repo, ['gc', '--older-than', '30d']);
    expect(second.stdout).toContain(
      'gc removed 0 worktree(s), 0 branch(es), 0 checkpoint(s), 1 run folder(s), 1 group folder(s)',
    );
    expect(fs.existsSync(group.dir)).toBe(false);
    expect((await agentbox(repo, ['gc', '--older-than', '30d'])).stdout).toBe('nothing to collect\n');
  });
});
