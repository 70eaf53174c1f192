import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGroup, updateGroupState } from '../../src/group/store.js';
import { createRun, type Ledger, type RunState, readState, updateState } from '../../src/ledger/index.js';
import { LedgerWatcher } from '../../src/web/events.js';
import { diffStat } from '../../src/web/group-facts.js';
import { attemptNumber, mergeGroupAction } from '../../src/web/group-merge.js';
import { groupAsk } from '../../src/web/group-start.js';
import { groupDetail } from '../../src/web/groups.js';
import { HttpError } from '../../src/web/http.js';
import { runsPage } from '../../src/web/runs.js';
import { ENVELOPE, ledgerRepo } from './fixtures/ledger.js';

describe("POST /api/runs's group fields", () => {
  const bad = (body: Record<string, unknown>) => {
    try {
      groupAsk(body);
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      return `${(error as HttpError).status} ${(error as HttpError).message}`;
    }
    return 'accepted';
  };
  it.each([
    [{ type: 'fix' }, null],
    [{ type: 'fix', attempts: 1 }, null],
    [{ type: 'fix', attempts: '1' }, null],
    [{ type: 'fix', attempts: 3 }, { attempts: 3 }],
    [
      { type: 'fix', attempts: '4', models: 'a, b', max_parallel: '2', first_pass: true },
      { attempts: 4, models: ['a', 'b'], maxParallel: 2, firstPass: true },
    ],
    [
      { type: 'fix', attempts: 2, models: ['opus', 'sonnet'] },
      { attempts: 2, models: ['opus', 'sonnet'] },
    ],
  ])('%j → %j', (body, want) => {
    expect(groupAsk(body)).toEqual(want);
  });
  it.each([
    [{ type: 'fix', attempts: 0 }, '"attempts" must be a whole number from 1 to 16'],
    [{ type: 'fix', attempts: 17 }, 'from 1 to 16, not 17'],
    [{ type: 'fix', attempts: 2.5 }, 'not 2.5'],
    [{ type: 'fix', attempts: '2; rm -rf ~' }, 'not "2; rm -rf ~"'],
    [{ type: 'fix', attempts: -3 }, 'not -3'],
    [{ type: 'fix', attempts: [2] }, 'not [2]'],
    [{ type: 'fix', attempts: '1e1' }, 'not "1e1"'],
    [{ type: 'scout', attempts: 2 }, '"attempts" is for fix runs only, not "scout"'],
    [{ type: 'fix', attempts: 2, models: 'a,--dangerously-skip-permissions b' }, 'not a model name'],
    [{ type: 'fix', attempts: 2, models: '-x' }, 'not a model name'],
    [{ type: 'fix', attempts: 2, models: 7 }, 'comma-separated list'],
    [{ type: 'fix', attempts: 2, models: 'a', model: 'b' }, 'not both'],
    [{ type: 'fix', attempts: 2, max_parallel: 99 }, '"max_parallel" must be a whole number from 1 to 16'],
    [{ type: 'fix', attempts: 2, first_pass: 'yes' }, '"first_pass" must be true or false'],
    [{ type: 'fix', models: 'a' }, 'models need "attempts" of 2 or more'],
    [{ type: 'fix', attempts: 1, max_parallel: 2 }, 'max_parallel need "attempts" of 2 or more'],
  ])('%j is a 400 saying %s', (body, message) => {
    const said = bad(body);
    expect(said).toMatch(/^400 /);
    expect(said).toContain(message);
  });
  it.each([
    [{ attempt: 2 }, 2],
    [{ attempt: 3 }, 3],
  ])('attempt %j of 3 is %i', (body, k) => expect(attemptNumber(body, 3)).toBe(k));
  it.each([
    [{}],
    [{ attempt: 0 }],
    [{ attempt: 4 }],
    [{ attempt: '2' }],
    [{ attempt: 1.5 }],
    [{ attempt: null }],
    [{ attempt: '../2' }],
  ])('attempt %j of 3 is a 400', (body) =>
    expect(() => attemptNumber(body, 3)).toThrow(/"attempt" must be a whole number from 1 to 3/),
  );
});

describe('pure readers', () => {
  it('diffStat counts files and hunk lines, not the --- and +++ headers', () => {
    const patch = [
      'diff --git a/x b/x',
      '--- a/x',
      '+++ b/x',
      '@@ -1,2 +1,2 @@',
      '-old',
      '+new',
      '+more',
      'diff --git a/y b/y',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/y',
      '@@ -0,0 +1 @@',
      '+y',
      '',
    ].join('\n');
    expect(diffStat(patch)).toEqual({ files: 2, insertions: 3, deletions: 1 });
  });
});

const RUN_OPTIONS = { timeout_ms: 60_000, supervisor: 'off', max_iterations: 5, model: null };

const PATCH = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-a\n+b\n+c\n';

async function attempt(
  ledger: Ledger,
  group: { name: string; id: string },
  k: number,
  state: Partial<RunState>,
  at: string,
) {
  const run = await createRun(ledger, {
    type: 'fix',
    task: 'make it so',
    envelope: ENVELOPE,
    repoShaStart: null,
    now: new Date(at),
    options: { group: { id: group.id, name: group.name, attempt: k, attempts: 3 } },
  });
  await updateState(ledger, run, state as never);
  fs.writeFileSync(path.join(run.dir, 'changes.patch'), PATCH);
  await updateGroupState(ledger, group.name, (s) => ({
    members: s.members.map((m) => (m.attempt === k ? { ...m, run: run.name } : m)),
  }));
  return run;
}

const spend = (cost: number) => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cost_usd: cost,
  estimated: false,
  turns: 1,
  duration_ms: 1,
  calls: 1,
});

describe('GET /api/groups/<group> and the runs list, against a ledger', () => {
  it('ranks the attempts, folds them into one row of the list, and names the group by id', async () => {
    const { ledger } = ledgerRepo();
    const g = await createGroup(ledger, {
      task: 'make it so',
      attempts: 3,
      models: ['opus', 'sonnet'],
      maxParallel: 2,
      firstPass: false,
      maxCostUsd: null,
      repoShaStart: 'abc',
      runOptions: RUN_OPTIONS,
      now: new Date('2026-11-27T05:00:00Z'),
    });
    const group = { name: g.name, id: g.meta.group_id };
    const usage = (c: number) => ({ agent: spend(c), supervisor: spend(0) });
    const failing = {
      status: 'REVIEW',
      output: { template: null, applied: true, violations: 1, corrections: 0, verified: false },
      usage: usage(0.2),
    } as const;
    const passing = {
      status: 'REVIEW',
      output: { template: null, applied: true, violations: 0, corrections: 0, verified: true },
      usage: usage(0.1),
    } as const;
    const worse = await attempt(ledger, group, 1, failing, '2026-11-27T05:00:01Z');
    const best = await attempt(ledger, group, 2, passing, '2026-11-27T05:00:02Z');
    await updateGroupState(ledger, g.name, () => ({ status: 'ENDED', pid: null, pid_start: null }));
    await createRun(ledger, { type: 'scout', task: 'look', envelope: ENVELOPE, repoShaStart: null });

    const detail = groupDetail(ledger, g.meta.group_id);
    expect(detail.attempts.map((a) => a.attempt)).toEqual([2, 1, 3]);
    expect(detail.ranking).toMatchObject({ best: 2, tie: [] });
    expect(detail.ranking.why).toMatch(/^1st: attempt 2 — /);
    expect(detail.attempts[0]).toMatchObject({
      run: best.name,
      place: 1,
      verified: true,
      model: 'claude-sonnet-4-5',
      stat: { files: 1, insertions: 2, deletions: 1 },
      mergeable: true,
    });
    expect(detail.attempts[1]).toMatchObject({ verified: false, violations: 1, mergeable: true });
    expect(detail.attempts[2]).toMatchObject({ run: null, started: false, mergeable: false, model: 'opus' });
    expect(detail.status).toBe('REVIEW');
    expect(detail.label).toBe('fix ×3 · 1 passed · 1 failed · $0.30');
    expect(groupDetail(ledger, g.name).id).toBe(g.meta.group_id);
    expect(() => groupDetail(ledger, 'fffffe')).toThrow(HttpError);

    const page = runsPage(ledger, new URLSearchParams());
    expect(page.total).toBe(2);
    expect(page.runs.map((r) => r.type)).toEqual(['scout', 'fix']);
    expect(page.runs[1]).toMatchObject({
      name: g.name,
      status: 'REVIEW',
      kind: 'group',
      label: 'fix ×3 · 1 passed · 1 failed · $0.30',
    });
    const filtered = runsPage(ledger, new URLSearchParams({ status: 'REVIEW' }));
    expect(filtered.runs.map((r) => r.name)).toEqual([g.name]);
    const paged = runsPage(ledger, new URLSearchParams({ limit: '1', offset: '1' }));
    expect(paged.runs.map((r) => r.name)).toEqual([g.name]);
    // The row follows its attempts' states.
    await updateState(ledger, worse, { output: { ...passing.output } });
    const again = runsPage(ledger, new URLSearchParams()).runs[1] as { label?: string };
    expect(again.label).toBe('fix ×3 · 2 passed · $0.30');
  });
});

describe('POST /api/groups/<group>/merge refuses what the gate cannot take', () => {
  const refusal = async (work: Promise<unknown>) => {
    try {
      await work;
    } catch (error) {
      return `${(error as HttpError).status} ${(error as HttpError).message}`;
    }
    return 'merged';
  };

  it('a group with an attempt still running, an attempt that never started, a merged group', async () => {
    const { repo, ledger } = ledgerRepo();
    const ac = { root: repo.dir, ledger, env: {} };
    const g = await createGroup(ledger, {
      task: 'make it so',
      attempts: 3,
      models: null,
      maxParallel: 1,
      firstPass: false,
      maxCostUsd: null,
      repoShaStart: 'abc',
      runOptions: RUN_OPTIONS,
    });
    const group = { name: g.name, id: g.meta.group_id };
    await attempt(ledger, group, 1, { status: 'ACTIVE' }, '2026-11-27T05:00:01Z');
    expect(await refusal(mergeGroupAction(ac, group.id, { attempt: 1 }))).toMatch(
      /^409 group .* is still running: attempt\(s\) 2, 3 wait their turn$/,
    );
    const running = (await updateGroupState(ledger, g.name, () => ({ status: 'ENDED' }))).members[0]!.run!;
    await updateState(ledger, running, { status: 'ABORTED' });
    expect(await refusal(mergeGroupAction(ac, group.id, { attempt: 3 }))).toBe(
      `409 attempt 3 of group ${group.id} cannot be merged: not started (only a REVIEW attempt has changes waiting)`,
    );
    expect(await refusal(mergeGroupAction(ac, group.id, { attempt: 1 }))).toBe(
      `409 attempt 1 of group ${group.id} cannot be merged: ABORTED (only a REVIEW attempt has changes waiting)`,
    );
    // An attempt that could not start: the page says so and why (issue 36), not "waiting".
    await updateGroupState(ledger, g.name, (s) => ({
      members: s.members.map((m) => (m.attempt === 2 ? { ...m, error: 'could not claim a run name' } : m)),
    }));
    const two = groupDetail(ledger, group.id).attempts.find((a) => a.attempt === 2)!;
    expect(two).toMatchObject({ started: false, start_error: 'could not claim a run name' });
    expect(two.reason).toBe('could not start: could not claim a run name');
    expect(await refusal(mergeGroupAction(ac, group.id, { attempt: 4 }))).toBe(
      '400 "attempt" must be a whole number from 1 to 3, not 4',
    );
    expect(await refusal(mergeGroupAction(ac, 'nogroup', { attempt: 1 }))).toMatch(/^404 no group "nogroup"/);
    await updateGroupState(ledger, g.name, () => ({
      status: 'MERGED',
      merged: { attempt: 2, run: 'x', at: 'now' },
    }));
    expect(await refusal(mergeGroupAction(ac, group.id, { attempt: 1 }))).toBe(
      `409 group ${g.name} is already merged (attempt 2, run x)`,
    );
  });
});

describe('a group folder that names a run that is not its own (a hand edit, a fetched group)', () => {
  it('does not show it as an attempt, and refuses to merge the group (which would set it aside)', async () => {
    const { repo, ledger } = ledgerRepo();
    const g = await createGroup(ledger, {
      task: 'make it so',
      attempts: 2,
      models: null,
      maxParallel: 2,
      firstPass: false,
      maxCostUsd: null,
      repoShaStart: 'abc',
      runOptions: RUN_OPTIONS,
    });
    const group = { name: g.name, id: g.meta.group_id };
    await attempt(ledger, group, 1, { status: 'ABORTED' }, '2026-11-27T05:00:01Z');
    const mine = await createRun(ledger, {
      type: 'fix',
      task: 'my own work',
      envelope: ENVELOPE,
      repoShaStart: null,
    });
    await updateState(ledger, mine, { status: 'REVIEW' });
    fs.writeFileSync(path.join(mine.dir, 'changes.patch'), PATCH);
    await updateGroupState(ledger, g.name, (s) => ({
      status: 'ENDED',
      members: s.members.map((m) => (m.attempt === 2 ? { ...m, run: mine.name } : m)),
    }));
    const detail = groupDetail(ledger, group.id);
    expect(detail.attempts.find((a) => a.attempt === 2)).toMatchObject({
      run: null,
      started: false,
      mergeable: false,
    });
    const ac = { root: repo.dir, ledger, env: {} };
    await expect(mergeGroupAction(ac, group.id, { attempt: 1, force: true })).rejects.toThrow(
      `group ${g.name} names run(s) that are not its attempts: ${mine.name} — nothing was merged`,
    );
    expect(readState(mine.dir)?.status).toBe('REVIEW');
  });
});

describe("the page's live updates", () => {
  it("a change of a group's own state.json (halted, ended, merged) is a change for the page", async () => {
    const { ledger } = ledgerRepo();
    const g = await createGroup(ledger, {
      task: 'make it so',
      attempts: 2,
      models: null,
      maxParallel: 1,
      firstPass: true,
      maxCostUsd: null,
      repoShaStart: 'abc',
      runOptions: RUN_OPTIONS,
    });
    const watcher = new LedgerWatcher(ledger, 20);
    const changes: unknown[] = [];
    const stop = watcher.subscribe((c) => changes.push(c));
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(changes).toEqual([]);
      await updateGroupState(ledger, g.name, () => ({
        halted: { reason: 'first_pass', detail: 'attempt 1 passed', at: new Date().toISOString() },
      }));
      await waitUntil(() => changes.length > 0);
      expect(changes).toEqual([{ run: null }]);
    } finally {
      stop();
    }
  });
});

async function waitUntil(ok: () => boolean, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
