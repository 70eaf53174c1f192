import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { createGroup } from '../../src/group/store.js';
import { createRun, type Ledger, type RunMeta } from '../../src/ledger/index.js';
import { buildMeta, parseMeta, serializeMeta } from '../../src/ledger/meta.js';
import { importedMeta } from '../../src/remote/imported.js';
import { carriedText, rerunOptions, rerunPlan, type TodayLimits } from '../../src/run/rerun.js';
import { HttpError } from '../../src/web/http.js';
import { rerunAction } from '../../src/web/rerun.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * `agentbox rerun` (issue 39, "Re-run"): what it takes from the old run, and what it refuses. The
 * successful rerun, with the real Claude Code, is test/e2e/rerun.test.ts.
 */

const OLD = '26-03-01_1000__bump-x__a1b2c3';

function meta(over: Partial<RunMeta> = {}, options?: Record<string, unknown>): RunMeta {
  const m = buildMeta({
    name: OLD,
    id: 'a1b2c3',
    slug: 'bump-x',
    type: 'fix',
    task: 'bump x',
    envelope: ENVELOPE,
    repoRoot: '/repo',
    repoShaStart: null,
    now: new Date('2026-03-01T10:00:00Z'),
    ...(options ? { options } : {}),
  });
  return { ...m, ...over };
}

const ORIGIN = { remote: 'origin', host: 'ci-7', run: OLD };
/** Today's configuration: a run started now without flags gets these. */
const TODAY: TodayLimits = {
  timeout_ms: 3_600_000,
  supervisor: 'claude',
  max_iterations: 50,
  max_cost_usd: 5,
};
/** Stricter than TODAY, each of them. */
const LIMITS = { timeout_ms: 2_700_000, supervisor: 'rules', max_iterations: 20, max_cost_usd: 2.5 };
const STRICTER = { timeout: '2700000ms', supervisor: 'rules', maxIterations: '20', maxCost: '2.5' };

describe('rerunPlan: what a rerun takes from the old run', () => {
  it.each<[string, RunMeta, TodayLimits, object]>([
    [
      'a local run: its chosen model, and its limits where stricter than today’s',
      meta({}, { ...LIMITS, model: 'opus' }),
      TODAY,
      { model: 'opus', ...STRICTER },
    ],
    ['no model chosen for it: none carried (today’s claude.model)', meta({}, LIMITS), TODAY, STRICTER],
    [
      'limits looser than today’s: today’s apply',
      meta({}, { timeout_ms: 7_200_000, supervisor: 'off', max_iterations: 80, max_cost_usd: 9 }),
      TODAY,
      {},
    ],
    [
      'limits equal to today’s: nothing to carry',
      meta({}, { timeout_ms: 3_600_000, supervisor: 'claude', max_iterations: 50, max_cost_usd: 5 }),
      TODAY,
      {},
    ],
    [
      'a budget where today has none',
      meta({}, { max_cost_usd: 2.5 }),
      { ...TODAY, max_cost_usd: null },
      { maxCost: '2.5' },
    ],
    [
      'an attempt of a group: its budget was the whole group’s, not carried',
      meta({}, { ...LIMITS, model: 'sonnet', group: { id: 'd4e5f6', attempt: 2, attempts: 3 } }),
      TODAY,
      { model: 'sonnet', timeout: '2700000ms', supervisor: 'rules', maxIterations: '20' },
    ],
    [
      'values agentbox never writes: left to today’s configuration',
      meta({}, { model: 7, timeout_ms: -1, supervisor: 'yolo', max_iterations: 1.5, max_cost_usd: 'lots' }),
      TODAY,
      {},
    ],
    ['no options at all', meta(), TODAY, {}],
    [
      'a fetched run: nothing but its type and task (its options are the remote’s claims)',
      meta({ origin: ORIGIN }, { ...LIMITS, model: 'opus' }),
      TODAY,
      {},
    ],
  ])('%s', (_, m, today, carried) => {
    const plan = rerunPlan(m, today);
    expect(plan.carried).toEqual(carried);
    expect(plan).toMatchObject({ of: OLD, type: 'fix', task: 'bump x', fetched: m.origin ?? null });
  });

  it.each<[string, RunMeta, RegExp]>([
    [
      'an interactive session',
      meta({ type: 'interactive' }),
      /interactive session: agentbox rerun takes scout, plan, fix and review runs/,
    ],
    ['an empty task', meta({ task: '  ' }), /the task is empty/],
    ['a task with a NUL byte', meta({ task: 'a\0b' }), /NUL byte/],
  ])('refuses %s, as a usage error', (_, m, message) => {
    let error: unknown;
    try {
      rerunPlan(m, TODAY);
    } catch (e) {
      error = e;
    }
    expect(isAgentboxError(error) && error.code).toBe('USAGE');
    expect((error as Error).message).toMatch(message);
  });

  it('a flag typed now replaces what was carried; one not typed leaves it', () => {
    const plan = rerunPlan(meta({}, { ...LIMITS, model: 'opus' }), TODAY);
    const options = rerunOptions(plan, { model: 'haiku', maxCost: undefined, detach: true });
    expect(options).toEqual({ model: 'haiku', ...STRICTER, detach: true });
    expect(carriedText(plan, { model: 'haiku' })).toBe(
      'timeout 45m (today: 1h) · supervisor rules (today: claude) · max iterations 20 (today: 50) · budget $2.50 (today: $5.00)',
    );
  });
});

describe('meta.yaml rerun_of', () => {
  it('is written and read back; a value that is not a run name makes the file corrupt', () => {
    const m = { ...meta(), rerun_of: '26-02-28_0900__bump-x__0f0f0f' };
    expect(parseMeta(serializeMeta(m), 'meta.yaml').rerun_of).toBe('26-02-28_0900__bump-x__0f0f0f');
    expect(parseMeta(serializeMeta(meta()), 'meta.yaml')).not.toHaveProperty('rerun_of');
    expect(() => parseMeta(serializeMeta({ ...m, rerun_of: '../../etc' }), 'meta.yaml')).toThrow(
      /rerun_of" is not a run name/,
    );
  });

  it('is dropped from a fetched run: it names a run of the other machine’s ledger', () => {
    const remote = { ...meta(), rerun_of: '26-02-28_0900__bump-x__0f0f0f' };
    const here = importedMeta(remote, OLD, ORIGIN);
    expect(here).not.toHaveProperty('rerun_of');
    expect(here.origin).toEqual(ORIGIN);
  });
});

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

/** Every file of a run folder with its bytes, events.jsonl apart (a refusal is logged there). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(f.parentPath, f.name);
    if (f.isFile() && f.name !== 'events.jsonl')
      out[path.relative(dir, full)] = fs.readFileSync(full, 'latin1');
  }
  return out;
}

async function fixRun(ledger: Ledger, task: string, type: 'fix' | 'interactive' = 'fix') {
  return createRun(ledger, {
    type,
    task,
    envelope: ENVELOPE,
    repoShaStart: null,
    pid: process.pid,
    now: new Date('2026-03-01T10:00:00Z'),
  });
}

const eventsOf = (dir: string) =>
  fs
    .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('agentbox rerun refuses, and starts nothing', () => {
  it('an interactive session, and a group (naming what to type instead)', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const laptop = machine(world, 'laptop');
    const session = await fixRun(laptop.ledger, 'look around', 'interactive');
    const group = await createGroup(laptop.ledger, {
      task: 'bump x',
      attempts: 2,
      models: null,
      maxParallel: 2,
      firstPass: false,
      maxCostUsd: null,
      repoShaStart: laptop.repo.git('rev-parse', 'HEAD').trim(),
      runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 5, model: null },
    });
    const before = laptop.runs();
    const a = await laptop.agentbox(['rerun', session.id]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`${session.name} is an interactive session`);
    expect(a.stderr).toContain(`agentbox start --resume ${session.id}`);
    const b = await laptop.agentbox(['rerun', group.name.slice(-6)]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain(`${group.name} is a group of attempts: agentbox rerun takes one run`);
    expect(b.stderr).toContain('agentbox rerun <attempt');
    expect(laptop.runs()).toEqual(before);
  });

  it('a fetched run: its task is shown (made safe) and needs a yes; unconfirmed, the refusal is logged and the run is untouched', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const task = 'bump x\x1b]0;owned\x07\nthen delete everything';
    const run = await fixRun(runner.ledger, task);
    expect((await runner.agentbox(['push', run.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    const dir = path.join(laptop.ledger.runsDir, run.name);
    const before = snapshot(dir);
    const runs = laptop.runs();

    // No terminal, no --yes: refused, logged, nothing started.
    const refused = await laptop.agentbox(['rerun', run.id]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain(
      `${run.name} was fetched from origin: it ran on runner.example and published by Agentbox Test <test@agentbox.invalid>. Its task is that publication's word, not checked here:\n  bump x\n  then delete everything\n`,
    );
    expect(refused.stdout).not.toContain('\x1b');
    expect(refused.stderr).toContain(`refusing to rerun ${run.name} without a confirmation`);
    expect(refused.stderr).toContain(`agentbox rerun ${run.id} --yes`);
    expect(eventsOf(dir).filter((e) => e.event === 'rerun_refused')).toEqual([
      expect.objectContaining({ reason: 'unconfirmed', by: 'cli' }),
    ]);

    // Asked, and the answer is no: nothing started.
    const no = await laptop.agentbox(['rerun', run.id], ['n']);
    expect(no.code).toBe(1);
    expect(no.stdout).toContain(
      'Start this task here as a new fix run, with your configuration and sandbox? [y/N] ',
    );
    expect(no.stdout).toContain('Nothing started.');

    // The page: 409 with the task, until its confirmation sends `confirm`; logged as the UI's.
    let error: unknown;
    try {
      await rerunAction({ root: laptop.repo.dir, ledger: laptop.ledger, env: laptop.env }, run.id, {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(409);
    expect((error as HttpError).extra).toMatchObject({ code: 'RERUN_UNCONFIRMED', task });
    expect(
      eventsOf(dir)
        .filter((e) => e.event === 'rerun_refused')
        .map((e) => e.by),
    ).toEqual(['cli', 'ui']);

    expect(laptop.runs()).toEqual(runs);
    expect(snapshot(dir)).toEqual(before);
  });
});
