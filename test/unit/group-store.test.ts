import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { groupAttempts, groupStatus } from '../../src/group/attempts.js';
import { settleGroup } from '../../src/group/merge.js';
import { groupPlan } from '../../src/group/options.js';
import { findGroup } from '../../src/group/resolve.js';
import { isGroupRow, listStatusRows } from '../../src/group/status-rows.js';
import { requestAttemptStop, takeStopRequest } from '../../src/group/stop-request.js';
import {
  attemptModel,
  type CreateGroupInput,
  createGroup,
  readGroup,
  updateGroupState,
} from '../../src/group/store.js';
import { readState, resolveRun, updateState } from '../../src/ledger/index.js';
import { attemptRuns } from '../../src/recover/group-plan.js';
import { composePrompt } from '../../src/templates/compose.js';
import { makeGroup } from './fixtures/group.js';
import { create, errorOf, idSequence, ledgerRepo, scratchDir } from './fixtures/ledger.js';

const INPUT: CreateGroupInput = {
  task: 'set x to 42',
  attempts: 3,
  models: ['a', 'b'],
  maxParallel: 2,
  firstPass: false,
  maxCostUsd: null,
  repoShaStart: 'f'.repeat(40),
  runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 5, model: null },
};

describe('a group in the ledger (src/group/)', () => {
  it('is group.json and state.json with every attempt waiting, models spread over them', async () => {
    const { ledger } = ledgerRepo();
    const group = await createGroup(ledger, INPUT);
    const back = readGroup(ledger, group.name);
    expect(back.meta).toMatchObject({
      attempts: 3,
      max_parallel: 2,
      models: ['a', 'b'],
      task: 'set x to 42',
    });
    expect(back.state.status).toBe('ACTIVE');
    expect(back.state.members).toEqual([
      { attempt: 1, run: null, model: 'a' },
      { attempt: 2, run: null, model: 'b' },
      { attempt: 3, run: null, model: 'a' },
    ]);
    expect(attemptModel(null, 2)).toBeNull();
    const next = await updateGroupState(ledger, group.name, (s) => ({
      members: s.members.map((m) => (m.attempt === 2 ? { ...m, run: 'r' } : m)),
    }));
    expect(readGroup(ledger, group.name).state.members[1]!.run).toBe('r');
    expect(next.updated_at >= back.state.updated_at).toBe(true);
  });

  it('never takes an id a run has, nor a run one a group has', async () => {
    const { ledger } = ledgerRepo();
    await create(ledger, 'a run', '2026-01-01T00:00:00Z', { ids: idSequence('abc123') });
    const group = await createGroup(ledger, { ...INPUT, randomId: idSequence('abc123', 'def456') });
    expect(group.meta.group_id).toBe('def456');
    const run = await create(ledger, 'another run', '2026-01-01T00:01:00Z', {
      ids: idSequence('def456', '0a0b0c'),
    });
    expect(run.id).toBe('0a0b0c');
  });

  it('is found by name, id and id prefix; a prefix that names a run too is ambiguous', async () => {
    const { ledger } = ledgerRepo();
    await create(ledger, 'a run', '2026-01-01T00:00:00Z', { ids: idSequence('abc123') });
    const group = await createGroup(ledger, { ...INPUT, randomId: idSequence('abd456') });
    expect(findGroup(ledger, group.name)).toBe(group.name);
    expect(findGroup(ledger, 'abd456')).toBe(group.name);
    expect(findGroup(ledger, 'abd')).toBe(group.name);
    expect(findGroup(ledger, 'abc123')).toBeNull();
    expect(findGroup(ledger, 'latest')).toBeNull();
    await createGroup(ledger, { ...INPUT, randomId: idSequence('abc999') });
    const both = await errorOf(() => findGroup(ledger, 'abc'));
    expect(isAgentboxError(both) && both.code).toBe('RUN_AMBIGUOUS');
    // The run resolver names the group when asked for a run by the group's id.
    const asRun = await errorOf(() => resolveRun(ledger, 'abd456'));
    expect(isAgentboxError(asRun) && asRun.message).toContain('is a group of attempts');
  });

  it('reads a hand-edited or hostile file as an error, not as a group', async () => {
    const { ledger } = ledgerRepo();
    const group = await createGroup(ledger, INPUT);
    fs.writeFileSync(
      path.join(group.dir, 'state.json'),
      JSON.stringify({ schema_version: 1, status: 'HACKED', members: [] }),
    );
    const error = await errorOf(() => readGroup(ledger, group.name));
    expect(isAgentboxError(error) && error.code).toBe('RUN_CORRUPT');
    fs.writeFileSync(
      path.join(group.dir, 'state.json'),
      JSON.stringify({ schema_version: 1, status: 'ENDED', members: [{ attempt: 0 }] }),
    );
    expect(isAgentboxError(await errorOf(() => readGroup(ledger, group.name)))).toBe(true);
  });

  it('shows as one status: running, waiting with or without its process, or as its attempts ended', async () => {
    const { ledger } = ledgerRepo();
    const group = await createGroup(ledger, INPUT);
    const run = (status: string) => ({ state: { status } }) as never;
    const of = (...runs: (string | null)[]) =>
      runs.map((s, i) => ({ attempt: i + 1, model: null, name: s ? `r${i}` : null, run: s ? run(s) : null }));
    expect(groupStatus(group, of('ACTIVE', null, null), false)).toBe('ACTIVE');
    expect(groupStatus(group, of('REVIEW', null, null), true)).toBe('ACTIVE');
    expect(groupStatus(group, of('REVIEW', null, null), false)).toBe('CRASHED');
    const ended = { ...group, state: { ...group.state, status: 'ENDED' as const } };
    expect(groupStatus(ended, of('ABORTED', 'REVIEW', 'DONE'), false)).toBe('REVIEW');
    expect(groupStatus(ended, of('ABORTED', 'DONE', 'CRASHED'), false)).toBe('DONE');
    expect(groupStatus(ended, of('ABORTED', 'ABORTED', 'ABORTED'), false)).toBe('ABORTED');
    expect(groupStatus(ended, of('FAILED', 'CRASHED', 'ABORTED'), false)).toBe('ABORTED');
    const merged = { ...group, state: { ...group.state, status: 'MERGED' as const } };
    expect(groupStatus(merged, of('MERGED', 'DISCARDED', 'DISCARDED'), false)).toBe('MERGED');
  });
});

describe('fix --attempts: the flags', () => {
  it('a run alone without them; a group with them; each bad value named with an example', async () => {
    expect(groupPlan({}, 4)).toBeNull();
    expect(groupPlan({ attempts: '1' }, 4)).toBeNull();
    expect(groupPlan({ attempts: '3' }, 4)).toEqual({
      attempts: 3,
      models: null,
      maxParallel: 4,
      firstPass: false,
    });
    expect(groupPlan({ attempts: '3', models: 'a, b', maxParallel: '1', firstPass: true }, 4)).toEqual({
      attempts: 3,
      models: ['a', 'b'],
      maxParallel: 1,
      firstPass: true,
    });
    for (const [flags, said] of [
      [{ attempts: '0' }, 'invalid --attempts "0"'],
      [{ attempts: '17' }, 'invalid --attempts "17"'],
      [{ attempts: '2x' }, 'invalid --attempts "2x"'],
      [{ attempts: '2', maxParallel: '-1' }, 'invalid --max-parallel "-1"'],
      [{ attempts: '2', models: 'a,,b' }, 'an empty name'],
      [{ attempts: '2', models: 'a;rm -rf ~' }, '"a;rm -rf ~"'],
      [{ firstPass: true }, 'are for several attempts'],
    ] as const) {
      const error = await errorOf(() => groupPlan(flags, 4));
      expect(isAgentboxError(error) && error.code).toBe('USAGE');
      expect((error as Error).message).toContain(said);
      expect(isAgentboxError(error) && error.hint).toMatch(/e\.g\./);
    }
  });
});

describe('one attempt stopped through its run folder', () => {
  it('is taken once; a garbled request still stops, under a plain name', () => {
    const dir = scratchDir();
    expect(takeStopRequest(dir)).toBeNull();
    requestAttemptStop(dir, 'agentbox stop');
    expect(takeStopRequest(dir)).toBe('agentbox stop');
    expect(takeStopRequest(dir)).toBeNull();
    fs.writeFileSync(path.join(dir, 'stop.request'), '{not json');
    expect(takeStopRequest(dir)).toBe('agentbox stop');
    fs.writeFileSync(path.join(dir, 'stop.request'), JSON.stringify({ by: 'x'.repeat(500) }));
    expect(takeStopRequest(dir)).toBe('agentbox stop');
  });
});

describe('the prompt of an attempt', () => {
  it('says which attempt it is after the task; a run alone has no such part', () => {
    const base = { type: 'fix', globalTemplate: '', projectTemplate: '', userPrompt: 'set x' };
    expect(composePrompt({ ...base, attempt: { k: 2, of: 3 } }).composed).toMatch(
      /set x\n\n<!-- agentbox: attempt -->\nThis is attempt 2 of 3 at this task\./,
    );
    expect(composePrompt({ ...base, attempt: { k: 1, of: 1 } }).composed).not.toContain('attempt');
    expect(composePrompt(base).composed).not.toContain('attempt');
  });
});

describe("a group's state.json names a run that is not its attempt", () => {
  it('that run is never ranked, discarded, hidden from status or kept from recover as one of its attempts', async () => {
    const { ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [
      { status: 'REVIEW', verified: true, lines: 2 },
      { status: null },
    ]);
    // The person's own run, and a hostile edit of the group's state that claims it as attempt 2.
    const mine = await create(ledger, 'my own fix', '2025-11-23T09:00:00Z', { type: 'fix' });
    await updateState(ledger, mine, { status: 'REVIEW' });
    await updateGroupState(ledger, group.name, (s) => ({
      status: 'ENDED',
      members: s.members.map((m) => (m.attempt === 2 ? { ...m, run: mine.name } : m)),
    }));
    const edited = readGroup(ledger, group.name);
    const attempts = groupAttempts(ledger, edited);
    expect(attempts[1]).toMatchObject({ name: mine.name, run: null, foreign: true });
    expect(attempts[0]!.foreign).toBeUndefined();
    // status lists it as a run of its own; the group's row does not count it.
    const { rows } = listStatusRows(ledger, {});
    expect(rows.some((r) => !isGroupRow(r) && r.name === mine.name)).toBe(true);
    const row = rows.find(isGroupRow)!;
    expect(row.attempts[1]!.status).toBeNull();
    // recover takes it up as the run it is, not through the group.
    expect(attemptRuns(ledger).has(mine.name)).toBe(false);
    expect(attemptRuns(ledger).size).toBe(1);
    // Discarding the group leaves it as it was.
    await settleGroup(ledger.root, ledger, edited, null);
    expect(readState(mine.dir)?.status).toBe('REVIEW');
  });
});
