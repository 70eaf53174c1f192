import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { show } from '../../src/commands/show.js';
import { groupEndLines } from '../../src/group/lines.js';
import { rankAttempts } from '../../src/group/rank.js';
import { writeGroupReport } from '../../src/group/report.js';
import { readGroup, updateGroupState } from '../../src/group/store.js';
import { groupNextSteps } from '../../src/group/view.js';
import { type AttemptEnd, makeGroup } from './fixtures/group.js';
import { context, ledgerRepo } from './fixtures/ledger.js';

/** A group of 3 whose process is gone: passed (42 lines), failed verify, passed with 2 violations. */
async function endedGroup(ends: readonly AttemptEnd[] = THREE) {
  const { repo, ledger } = ledgerRepo();
  const made = await makeGroup(ledger, ends, { models: ['sonnet', 'opus'] });
  await updateGroupState(ledger, made.group.name, () => ({
    status: 'ENDED',
    pid: null,
    ended_at: '2025-11-23T08:10:00.000Z',
  }));
  return { repo, ledger, ...made };
}

const THREE = [
  { status: 'REVIEW' as const, verified: true, lines: 42, cost: 0.08, seconds: 95 },
  { status: 'REVIEW' as const, verified: false, lines: 10, cost: 0.15 },
  { status: 'REVIEW' as const, verified: true, violations: 2, lines: 30, refusals: 1 },
];

describe('agentbox show <group>', () => {
  it('prints the group, its attempts ranked with the reason for the order, and the next steps', async () => {
    const { repo, ledger, group, runs } = await endedGroup();
    await writeGroupReport(ledger, group);
    for (const ref of [group.meta.group_id, group.name, group.meta.group_id.slice(0, 4)]) {
      const { ctx, io } = context(repo.dir);
      expect(await show(ctx, ref)).toBe(0);
      const out = io.stdout;
      const id = group.meta.group_id;
      expect(out.split('\n')[0]).toBe(group.name);
      expect(out).toContain(`  id          ${id}\n`);
      expect(out).toContain('  status      REVIEW\n');
      expect(out).toContain('  type        fix ×3 (a group: agentbox fix --attempts 3)\n');
      expect(out).toContain('  attempts    3 · at most 4 at once\n');
      expect(out).toContain('  models      sonnet, opus\n');
      expect(out).toContain('  first pass  no\n');
      expect(out).toContain('  spend       $0.33 · no budget\n');
      expect(out).toContain('ranking — 1st: attempt 1 — fewer contract violations (0 against 2)\n');
      const table = out.slice(out.indexOf('  RANK')).split('\n').slice(0, 4);
      expect(table[0]).toMatch(
        /^ {2}RANK {2}ATTEMPT {2}RUN +MODEL +STATUS +VERIFY +CONTRACT +VIOLATIONS +REFUSALS +DIFF +COST +TIME$/,
      );
      expect(table.slice(1).map((l) => l.trim().split(/\s{2,}/))).toEqual([
        [
          '1st',
          '1',
          runs[0]!.id,
          'claude-sonnet-4-5',
          'REVIEW',
          'passed',
          'applied',
          '0',
          '0',
          '42 lines',
          '$0.08',
          '1m 35s',
        ],
        [
          '2nd',
          '3',
          runs[2]!.id,
          'claude-sonnet-4-5',
          'REVIEW',
          'passed',
          'applied',
          '2',
          '1',
          '30 lines',
          '$0.10',
          '1m',
        ],
        [
          '3rd',
          '2',
          runs[1]!.id,
          'claude-sonnet-4-5',
          'REVIEW',
          'FAILED',
          'applied',
          '0',
          '0',
          '10 lines',
          '$0.15',
          '1m',
        ],
      ]);
      expect(out).toContain(`report: ${path.join(group.dir, 'report.md')}\n`);
      expect(out).toMatch(
        new RegExp(`next:\\n  agentbox diff ${id} +attempt 1's change \\(ranked first\\)\\n`),
      );
      expect(out).toMatch(
        new RegExp(`  agentbox diff ${id} --attempts 1,3 +how it differs from attempt 3's\\n`),
      );
      expect(out).toMatch(new RegExp(`  agentbox merge ${id} +merge attempt 1\\n$`));
    }
  });

  it('--json: the group, its status and the ranking with each attempt’s facts and reason', async () => {
    const { repo, group, runs } = await endedGroup();
    const { ctx, io } = context(repo.dir);
    await show(ctx, group.meta.group_id, { json: true });
    const out = JSON.parse(io.stdout);
    expect(out).toMatchObject({ kind: 'group', name: group.name, status: 'REVIEW', report: null });
    expect(out.meta.group_id).toBe(group.meta.group_id);
    expect(out.ranking.best).toBe(1);
    expect(out.ranking.tie).toEqual([]);
    expect(out.ranking.attempts[0]).toMatchObject({
      attempt: 1,
      run: runs[0]!.name,
      place: 1,
      verified: true,
      diffLines: 42,
      reason: 'passed runs.verify; 0 violations; 42 lines; $0.08; 1m 35s',
    });
  });

  it('an attempt is still its own run: show <attempt id> shows the run', async () => {
    const { repo, runs } = await endedGroup();
    const { ctx, io } = context(repo.dir);
    await show(ctx, runs[1]!.id);
    expect(io.stdout.split('\n')[0]).toBe(runs[1]!.name);
  });
});

const readGroupOf = (made: Awaited<ReturnType<typeof endedGroup>>) => readGroup(made.ledger, made.group.name);

describe('the group’s end lines (agentbox fix --attempts N, in the foreground)', () => {
  it('name `merge <group>` only when an attempt passed runs.verify; else show, which names the attempt', async () => {
    const passed = await endedGroup();
    expect(groupEndLines(passed.ledger, readGroupOf(passed), null)).toContain(
      `next: agentbox show ${passed.group.meta.group_id} · agentbox merge ${passed.group.meta.group_id}\n`,
    );
    const none = await endedGroup([
      { status: 'REVIEW' as const, verified: null, lines: 4 },
      { status: 'REVIEW' as const, verified: null, lines: 9 },
    ]);
    const text = groupEndLines(none.ledger, readGroupOf(none), null);
    expect(text).toContain(
      `next: agentbox show ${none.group.meta.group_id} (it names the attempt to merge)\n`,
    );
    expect(text).not.toContain('agentbox merge');
  });
});

describe('groupNextSteps', () => {
  it('a tie asks to pick; none finished points at recover and the first attempt; merged says which', async () => {
    const { group } = await endedGroup();
    const tie = rankAttempts([
      { ...base(1), verified: true },
      { ...base(2), verified: true },
    ]);
    const id = group.meta.group_id;
    expect(groupNextSteps(group, 'REVIEW', tie)).toEqual([
      `agentbox diff ${id} --attempts 1,2  how the tied attempts differ`,
      `agentbox merge ${id} --attempt 1    the ranking ties: name the attempt to merge`,
    ]);
    const none = rankAttempts([
      { ...base(1), status: 'CRASHED', failure: 'crashed' },
      { ...base(2), status: null, id: null },
    ]);
    expect(groupNextSteps(group, 'CRASHED', none)).toEqual([
      `agentbox recover ${id}  start the attempts left`,
      'agentbox show 111111     what attempt 1 did',
    ]);
    const nothing = rankAttempts([{ ...base(1), diffLines: null }]);
    expect(groupNextSteps(group, 'DONE', nothing)).toEqual([
      'agentbox show 111111  attempt 1 ranks first and changed nothing',
    ]);
    const merged = { ...group, state: { ...group.state, merged: { attempt: 2, run: 'r', at: 'now' } } };
    expect(groupNextSteps(merged, 'MERGED', tie)).toEqual(['attempt 2 was merged (run r)']);
    expect(groupNextSteps(group, 'ACTIVE', tie)).toEqual([
      `it is still running — check again with: agentbox show ${id}`,
    ]);
  });

  it('no runs.verify (the default): the merge names the attempt, which merge <group> would refuse unnamed (found by a user’s eye)', async () => {
    const { group } = await endedGroup();
    const id = group.meta.group_id;
    const unverified = rankAttempts([
      { ...base(1), verified: null },
      { ...base(2), verified: null, diffLines: 3 },
    ]);
    expect(groupNextSteps(group, 'REVIEW', unverified).at(-1)).toMatch(
      new RegExp(
        `^agentbox merge ${id} --attempt (\\d) +merge attempt \\1 \\(none passed runs\\.verify: it is named\\)$`,
      ),
    );
    const verified = rankAttempts([
      { ...base(1), verified: true },
      { ...base(2), verified: null, diffLines: 3 },
    ]);
    expect(groupNextSteps(group, 'REVIEW', verified).at(-1)).toMatch(
      new RegExp(`^agentbox merge ${id} +merge attempt 1$`),
    );
  });
});

describe('report.md of a group', () => {
  it('is written with the ranking, each reason, the order rule and the patches', async () => {
    const { ledger, group, runs } = await endedGroup();
    fs.mkdirSync(path.join(group.dir, 'patches'));
    for (const k of [10, 2, 1]) fs.writeFileSync(path.join(group.dir, 'patches', `agent_${k}.patch`), '');
    const ranking = await writeGroupReport(ledger, group.name);
    expect(ranking.best).toBe(1);
    const report = fs.readFileSync(path.join(group.dir, 'report.md'), 'utf8');
    expect(report).toContain('# Best of 3: fix the flaky test\n');
    expect(report).toContain('1st: attempt 1 — fewer contract violations (0 against 2).\n');
    expect(report).toContain(
      `| 1st | 1 | ${runs[0]!.id} | claude-sonnet-4-5 | REVIEW | passed | applied | 0 | 0 | 42 lines | $0.08 | 1m 35s |\n`,
    );
    expect(report).toContain(
      `2. attempt 3 (\`${runs[2]!.id}\`): passed runs.verify; 2 violations; 1 refusal; 30 lines; $0.10; 1m\n`,
    );
    expect(report).toContain(
      '- `patches/agent_1.patch`\n- `patches/agent_2.patch`\n- `patches/agent_10.patch`\n',
    );
  });

  it('a task with a table breaker stays in its cell', async () => {
    const { ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [{ status: 'REVIEW', verified: true, lines: 1 }], {
      models: ['a|b'],
    });
    await writeGroupReport(ledger, group);
    const report = fs.readFileSync(path.join(group.dir, 'report.md'), 'utf8');
    expect(report).toContain('models a\\|b');
  });
});

function base(attempt: number) {
  return {
    attempt,
    run: `r${attempt}`,
    id: String(attempt).repeat(6),
    model: null,
    status: 'REVIEW' as const,
    removed: false,
    failure: null,
    verified: null,
    applied: true,
    violations: 0,
    refusals: 0,
    diffLines: 10,
    costUsd: 0.1,
    durationMs: 1000,
  };
}

describe('a hostile group folder (a fetched group, a hand edit)', () => {
  it('show prints none of its escape sequences: times, halt, merge and models are made safe', async () => {
    const { repo, group } = await endedGroup();
    const esc = '\u001b]0;pwned\u0007\u001b[2J';
    const metaFile = path.join(group.dir, 'group.json');
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    fs.writeFileSync(metaFile, JSON.stringify({ ...meta, created_at: esc, task: `t${esc}`, models: [esc] }));
    const stateFile = path.join(group.dir, 'state.json');
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    const halted = { reason: 'stopped', detail: esc, at: esc };
    const merged = { attempt: 1, run: esc, at: esc };
    fs.writeFileSync(stateFile, JSON.stringify({ ...state, ended_at: esc, halted, merged }));
    const { ctx, io } = context(repo.dir);
    expect(await show(ctx, group.meta.group_id)).toBe(0);
    expect(io.stdout).toContain('  created     \n');
    expect(io.stdout).not.toContain('\u001b');
    expect(io.stdout).not.toContain('\u0007');
  });
});
