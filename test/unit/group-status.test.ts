import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderStatusTable, status } from '../../src/commands/status.js';
import { memoryIo } from '../../src/context.js';
import { groupDetail } from '../../src/group/row-text.js';
import { groupRow } from '../../src/group/status-rows.js';
import { readGroup, updateGroupState } from '../../src/group/store.js';
import { groupsToRecover, planRecover } from '../../src/recover/group-plan.js';
import { styler } from '../../src/util/style.js';

const plainStyler = styler(memoryIo());

import { createRun } from '../../src/ledger/index.js';
import { makeGroup } from './fixtures/group.js';
import { context, create, ENVELOPE, ledgerRepo } from './fixtures/ledger.js';

/** A scout (07:00), a group of 3 (08:00: passed, failed, running), a plan (09:00). */
async function ledgerWithGroup() {
  const { repo, ledger } = ledgerRepo();
  const scout = await create(ledger, 'why is it slow?', '2025-11-23T07:00:00Z');
  const made = await makeGroup(ledger, [
    { status: 'REVIEW', verified: true, lines: 4, cost: 0.1 },
    { status: 'REVIEW', verified: false, lines: 8, cost: 0.15 },
    { status: 'ACTIVE', cost: 0.06 },
  ]);
  const plan = await create(ledger, 'plan the queue', '2025-11-23T09:00:00Z', { type: 'plan' });
  return { repo, ledger, scout, plan, ...made };
}

const rowsOf = (out: string) => out.trimEnd().split('\n').slice(1);

describe('agentbox status with a group', () => {
  it('shows the group as one row: its id, "group", its status and counts before its task; no attempt', async () => {
    const { repo, ledger, scout, plan, group, runs } = await ledgerWithGroup();
    // The group's process is this one: alive, so the running attempt keeps it ACTIVE.
    for (const all of [false, true]) {
      const { ctx, io } = context(repo.dir);
      expect(await status(ctx, { all })).toBe(0);
      const rows = rowsOf(io.stdout);
      expect(rows).toHaveLength(3);
      expect(rows[0]).toMatch(new RegExp(`^${plan.id}\\s+plan\\s`));
      expect(rows[1]).toMatch(
        new RegExp(
          `^${group.meta.group_id}\\s+group\\s+ACTIVE\\s+\\S+\\s+\\$0\\.31\\s+fix ×3 · 1 passed · 1 failed · 1 running · fix the flaky test$`,
        ),
      );
      expect(rows[2]).toMatch(new RegExp(`^${scout.id}\\s+scout\\s`));
      for (const run of runs) expect(io.stdout).not.toContain(run!.id);
    }
    // Its attempts end: the group shows as REVIEW (an attempt has changes to merge).
    await import('../../src/ledger/index.js').then(({ updateState }) =>
      updateState(ledger, runs[2]!, { status: 'CRASHED', ended_at: new Date().toISOString() }),
    );
    await updateGroupState(ledger, group.name, () => ({ status: 'ENDED' }));
    const { ctx, io } = context(repo.dir);
    await status(ctx, { all: true });
    expect(rowsOf(io.stdout)[1]).toMatch(
      /\sgroup\s+REVIEW\s.*fix ×3 · 1 passed · 1 failed · fix the flaky test$/,
    );
  });

  it('--json: one object for the group with its attempts; total counts rows', async () => {
    const { repo, group, runs } = await ledgerWithGroup();
    for (const all of [false, true]) {
      const { ctx, io } = context(repo.dir);
      await status(ctx, { json: true, all });
      const out = JSON.parse(io.stdout);
      expect(out.total).toBe(3);
      expect(out.runs.map((r: { name: string }) => r.name)).not.toContain(runs[0]!.name);
      const row = out.runs[1];
      expect(row).toMatchObject({
        kind: 'group',
        name: group.name,
        id: group.meta.group_id,
        type: 'fix',
        status: 'ACTIVE',
        task: 'fix the flaky test',
        halted: null,
        merged: null,
      });
      expect(row.cost_usd).toBeCloseTo(0.31);
      expect(row.attempts).toEqual([
        {
          attempt: 1,
          run: runs[0]!.name,
          id: runs[0]!.id,
          model: null,
          status: 'REVIEW',
          verified: true,
          cost_usd: 0.1,
          error: null,
        },
        {
          attempt: 2,
          run: runs[1]!.name,
          id: runs[1]!.id,
          model: null,
          status: 'REVIEW',
          verified: false,
          cost_usd: 0.15,
          error: null,
        },
        {
          attempt: 3,
          run: runs[2]!.name,
          id: runs[2]!.id,
          model: null,
          status: 'ACTIVE',
          verified: null,
          cost_usd: 0.06,
          error: null,
        },
      ]);
    }
  });

  it('a group of many attempts takes one row of --limit, and its attempts are read past the window', async () => {
    const { repo, ledger } = ledgerRepo();
    const older = [];
    for (let i = 0; i < 3; i++) older.push(await create(ledger, `old ${i}`, `2025-11-22T0${i}:00:00Z`));
    const { group } = await makeGroup(
      ledger,
      Array.from({ length: 6 }, () => ({ status: 'REVIEW' as const, verified: true, cost: 0.01 })),
    );
    const { ctx, io } = context(repo.dir);
    await status(ctx, { json: true, limit: '3' });
    const out = JSON.parse(io.stdout);
    expect(out.total).toBe(4);
    expect(out.runs.map((r: { name: string }) => r.name)).toEqual([
      group.name,
      older[2]!.name,
      older[1]!.name,
    ]);
    expect(out.runs[0].attempts.map((a: { status: string }) => a.status)).toEqual(Array(6).fill('REVIEW'));
    const { ctx: c2, io: io2 } = context(repo.dir);
    await status(c2, { limit: '1' });
    expect(io2.stdout).toMatch(/fix ×6 · 6 passed · fix the flaky test\n… 3 more — agentbox status --all\n$/);
  });

  it('a group whose process is gone with attempts waiting shows CRASHED; a damaged group is a row saying so', async () => {
    const { repo, ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true }, { status: null }]);
    await updateGroupState(ledger, group.name, () => ({ pid: 999_999_999, pid_start: '1' }));
    const { ctx, io } = context(repo.dir);
    await status(ctx, {});
    expect(rowsOf(io.stdout)[0]).toMatch(/\sgroup\s+CRASHED\s.*fix ×2 · 1 passed · fix the flaky test$/);
    fs.writeFileSync(path.join(group.dir, 'state.json'), '{ not json');
    const { ctx: c2, io: io2 } = context(repo.dir);
    await status(c2, {});
    // Its attempts are listed as runs of their own: which group they belong to cannot be read.
    const rows = rowsOf(io2.stdout);
    expect(rows[0]).toMatch(/\sfix\s+REVIEW\s/);
    expect(rows[1]).toMatch(new RegExp(`^${group.meta.group_id}\\s+\\?\\s+\\?\\s.*\\(group: cannot read `));
  });
});

describe('an attempt that could not start (issue 36)', () => {
  it('is a row of its own kind: status says it, --json says why, recover starts it again', async () => {
    const { repo, ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true }, { status: null }]);
    // As the group's process leaves it when attempt 2's run or worktree could not be made, then ends.
    await updateGroupState(ledger, group.name, (s) => ({
      status: 'ENDED',
      ended_at: s.started_at,
      pid: 999_999_999,
      members: s.members.map((m) =>
        m.attempt === 2 ? { ...m, error: 'could not create the worktree: ENOSPC' } : m,
      ),
    }));
    const { ctx, io } = context(repo.dir);
    await status(ctx, {});
    expect(rowsOf(io.stdout)[0]).toMatch(/fix ×2 · 1 passed · 1 could not start · fix the flaky test$/);
    const { ctx: c2, io: io2 } = context(repo.dir);
    await status(c2, { json: true });
    expect(JSON.parse(io2.stdout).runs[0].attempts[1]).toMatchObject({
      run: null,
      status: null,
      error: 'could not create the worktree: ENOSPC',
    });
    // recover looks at the group (it ended, nothing crashed) and starts attempt 2 again.
    expect(groupsToRecover(ledger, null)).toEqual([{ name: group.name }]);
    const plans = await planRecover({ env: {} }, { ledger }, readGroup(ledger, group.name), false);
    expect(plans[1]).toMatchObject({
      action: 'start',
      reason: 'it could not start (could not create the worktree: ENOSPC): it starts again',
    });
    // Unless the group was halted before it could (a stop, the budget, the first pass).
    await updateGroupState(ledger, group.name, () => ({
      halted: { reason: 'stopped', detail: 'x', at: 'y' },
    }));
    expect(groupsToRecover(ledger, null)).toEqual([]);
  });
});

describe('a run made for an attempt and not recorded (its process died in between)', () => {
  it('is found by its own record and taken up as the attempt by recover, not started anew', async () => {
    const { ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true }, { status: null }]);
    // What createAttempt had done when the process died: the run, with its group in its own files.
    const orphan = await createRun(ledger, {
      type: 'fix',
      task: 'fix the flaky test',
      envelope: ENVELOPE,
      repoShaStart: '0'.repeat(40),
      pid: 999_999_999,
      options: { group: { id: group.meta.group_id, name: group.name, attempt: 2, attempts: 2 } },
    });
    // A run that says it is attempt 2 of another group is no concern of this one.
    await createRun(ledger, {
      type: 'fix',
      task: 'x',
      envelope: ENVELOPE,
      repoShaStart: '0'.repeat(40),
      pid: 999_999_999,
      options: { group: { id: 'abcdef', name: 'other__abcdef', attempt: 2, attempts: 2 } },
    });
    await updateGroupState(ledger, group.name, () => ({ pid: 999_999_999, pid_start: '1' }));
    const plans = await planRecover({ env: {} }, { ledger }, readGroup(ledger, group.name), false);
    expect(plans[1]).toMatchObject({ attempt: 2, run: orphan.name, adopt: true });
    expect(plans[1]!.action).not.toBe('start');
    expect(plans[1]!.reason).toMatch(/^its run was made but not recorded; /);
  });
});

describe('groupDetail: a group row’s counts', () => {
  it.each([
    [{ verified: [true, true, false, null] }, 'fix ×4 · 2 passed · 1 failed'],
    [{ statuses: ['REVIEW', 'REVIEW', 'CRASHED'] }, 'fix ×3 · 2 to review'],
    [{ statuses: ['ACTIVE', null, null], status: 'ACTIVE' }, 'fix ×3 · 1 running · 2 waiting'],
    [
      { statuses: ['REVIEW', 'ABORTED', null], halted: 'first_pass', verified: [true, null, null] },
      'fix ×3 · 1 passed · stopped at the first pass',
    ],
    [
      { statuses: ['MERGED', 'DISCARDED'], merged: 1, verified: [true, true] },
      'fix ×2 · 2 passed · attempt 1 merged',
    ],
  ] as const)('%j → %s', (given, want) => {
    const n = ('statuses' in given ? given.statuses : given.verified).length;
    const row = {
      kind: 'group' as const,
      type: 'fix' as const,
      status: ('status' in given ? given.status : 'REVIEW') as 'REVIEW',
      halted: ('halted' in given ? given.halted : null) as null,
      merged: ('merged' in given ? given.merged : null) as null,
      attempts: Array.from({ length: n }, (_, i) => ({
        attempt: i + 1,
        run: 'statuses' in given && given.statuses[i] === null ? null : `r${i}`,
        id: null,
        model: null,
        status: 'statuses' in given ? given.statuses[i]! : ('REVIEW' as const),
        verified: 'verified' in given ? given.verified[i]! : null,
        cost_usd: null,
        error: null,
      })),
    };
    expect(groupDetail(row as unknown as Parameters<typeof groupDetail>[0])).toBe(want);
  });

  it('renders in the table with the group type', async () => {
    const { ledger } = ledgerRepo();
    const { group, runs } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true, cost: 0.08 }]);
    const row = groupRow(group, new Map([[runs[0]!.name, null]]));
    const out = renderStatusTable([row], 1, new Date('2025-11-23T08:05:00Z'), plainStyler, {});
    expect(out.split('\n')[1]).toMatch(
      new RegExp(`^${group.meta.group_id}  group  \\w+\\s+5m     —  fix ×1 · fix the flaky test$`),
    );
  });
});

describe('a hostile group state.json', () => {
  it('a member that is no run name is never read as a path (a state.json planted outside runs/)', async () => {
    const { repo, ledger } = ledgerRepo();
    for (let i = 0; i < 3; i++) await create(ledger, `old ${i}`, `2025-11-22T0${i}:00:00Z`);
    const { group } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true, cost: 0.01 }]);
    const planted = path.join(ledger.dir, 'planted');
    fs.mkdirSync(planted);
    const state = JSON.parse(
      fs.readFileSync(path.join(ledger.runsDir, group.state.members[0]!.run!, 'state.json'), 'utf8'),
    );
    fs.writeFileSync(
      path.join(planted, 'state.json'),
      JSON.stringify({
        ...state,
        status: 'MERGED',
        usage: { ...state.usage, agent: { ...state.usage.agent, cost_usd: 99 } },
      }),
    );
    await updateGroupState(ledger, group.name, (s) => ({
      members: [...s.members, { attempt: 2, run: '../planted', model: null }],
    }));
    const { ctx, io } = context(repo.dir);
    await status(ctx, { json: true, limit: '1' });
    const row = JSON.parse(io.stdout).runs[0];
    expect(row.attempts[1]).toMatchObject({ run: '../planted', status: null, cost_usd: null });
    expect(row.cost_usd).toBeCloseTo(0.01);
  });
});

describe('the fold cache keeps an attempt’s group, number and verdict', () => {
  it('status --all answers the same from the log, from the cache, and from the cache alone', async () => {
    const { repo, ledger } = await ledgerWithGroup();
    const outs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { ctx, io } = context(repo.dir);
      await status(ctx, { json: true, all: true });
      outs.push(io.stdout);
    }
    expect(outs[1]).toBe(outs[0]);
    expect(outs[2]).toBe(outs[0]);
    const cache = JSON.parse(fs.readFileSync(path.join(ledger.dir, 'cache', 'index-fold.json'), 'utf8'));
    expect(cache.runs.verified.filter((v: unknown) => v !== null).sort()).toEqual([false, true]);
    expect(cache.runs.attempt.filter((v: unknown) => v !== null).sort()).toEqual([1, 2, 3]);
  });
});
