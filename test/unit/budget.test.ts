import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { budgetPassed, parseMaxCost } from '../../src/budget/budget.js';
import { formatUsd } from '../../src/budget/format.js';
import { endMeter, meterCeiling, meterEvent, meterSpend, startMeter } from '../../src/budget/meter.js';
import { estimateCost, priceOf, UNKNOWN_MODEL_FLOOR, UNKNOWN_MODEL_PRICE } from '../../src/budget/prices.js';
import { addSpend, addSupervisorCall, NO_SPEND } from '../../src/budget/spend.js';
import { Tally } from '../../src/budget/tally.js';
import {
  parseStreamLine,
  type ResultEvent,
  type StreamEvent,
  type TokenUsage,
} from '../../src/claude/stream.js';
import { isAgentboxError } from '../../src/errors.js';
import { migrateState } from '../../src/ledger/state.js';
import type { Spend } from '../../src/ledger/types.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/stream');
const eventsOf = (name: string) =>
  fs
    .readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8')
    .split('\n')
    .flatMap(parseStreamLine);

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});
const usage = (messageId: string, t: TokenUsage, more: Partial<StreamEvent & { kind: 'usage' }> = {}) =>
  ({
    kind: 'usage',
    messageId,
    model: 'claude-opus-5-5',
    usage: t,
    cacheWrite1h: 0,
    outputChars: 0,
    subagent: false,
    ...more,
  }) as StreamEvent;
const result = (more: Partial<ResultEvent> = {}): ResultEvent => ({
  kind: 'result',
  subtype: 'success',
  isError: false,
  result: 'ok',
  permissionDenials: [],
  ...more,
});
const spend = (over: Partial<Spend>): Spend => ({ ...NO_SPEND, ...over });
const fold = (events: StreamEvent[], base?: Spend) => events.reduce(meterEvent, startMeter(base));

describe('prices (Claude Code 2.1.330 catalog)', () => {
  it.each([
    ['claude-opus-5-5', 4, 20],
    ['claude-opus-5', 5, 25],
    ['claude-opus-4-5-20251101', 5, 25],
    ['us.anthropic.claude-opus-4-5-20251101-v1:0', 5, 25],
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-opus-4-20250514 (Opus 4.0 by its dated id)', 15, 75],
    ['claude-opus-4@20250514', 15, 75],
    ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-sonnet-4-5[1m]', 3, 15],
    ['CLAUDE-SONNET-5', 2, 10],
    ['claude-haiku-4-5', 1, 5],
    ['claude-fable-5-2', 8, 40],
    ['a model nobody knows', 15, 75],
    ['', 15, 75],
  ])('%s: $%d in, $%d out per million tokens', (model, input, output) => {
    expect(priceOf(model.split(' ')[0]!)).toMatchObject({ input, output });
  });

  it('prices an unknown model at the highest known rate of every kind', () => {
    expect(UNKNOWN_MODEL_PRICE).toEqual({
      input: 15,
      output: 75,
      cacheWrite: 18.75,
      cacheWrite1h: 30,
      cacheRead: 1.5,
    });
  });

  it.each([
    ["Claude Code's own figure for the success fixture", 'claude-opus-5-5', tokens(20, 20), 0, 0.00048],
    [
      'cache reads and writes (5 minutes)',
      'claude-sonnet-4-5',
      tokens(0, 0, 1_000_000, 1_000_000),
      0,
      0.3 + 3.75,
    ],
    [
      'cache writes kept an hour',
      'claude-sonnet-4-5',
      tokens(0, 0, 0, 1_000_000),
      400_000,
      0.6 * 3.75 + 0.4 * 6,
    ],
    ['a short prompt to Haiku 5.5', 'claude-haiku-5-5', tokens(100_000, 1_000_000), 0, 0.01 + 0.5],
    ['a long prompt to Haiku 5.5 (above 100k tokens)', 'claude-haiku-5-5', tokens(100_001, 0), 0, 0.0500005],
  ])('%s', (_label, model, t, hour, usd) => {
    expect(estimateCost(model, t, hour)).toBeCloseTo(usd, 10);
  });
});

describe('the meter (the agent, from its stream)', () => {
  it("takes Claude Code's figures from the result line: the success fixture", () => {
    const meter = fold(eventsOf('success'));
    expect(meterSpend(meter)).toEqual(
      spend({ ...tokens(20, 20), cost_usd: 0.00048, estimated: false, turns: 2, duration_ms: 257, calls: 1 }),
    );
  });

  it('estimates before the result: a message split over lines counts once; its usage as the stream says it', () => {
    const events = eventsOf('success');
    const before = fold(
      events.slice(
        0,
        events.findIndex((e) => e.kind === 'result'),
      ),
    );
    // Two messages of 10 in, each line saying 1 out (the usage of the message as it started).
    expect(meterSpend(before)).toEqual(
      spend({
        ...tokens(20, 2),
        cost_usd: expect.closeTo((20 * 4 + 2 * 20) / 1e6, 12),
        estimated: true,
        turns: 2,
        calls: 1,
      }),
    );
    // The budget, and a process that ends here: output at least its text, "Let me look." + the
    // tool input, "All done: hello.".
    const toolChars = JSON.stringify({ command: 'echo hello', description: 'say hello' }).length;
    const outputs = Math.ceil((12 + toolChars) / 4) + Math.ceil(16 / 4);
    const guessed = spend({
      ...tokens(20, outputs),
      cost_usd: expect.closeTo((20 * 4 + outputs * 20) / 1e6, 12),
      estimated: true,
      turns: 2,
      calls: 1,
    });
    expect(meterCeiling(before)).toEqual(guessed);
    expect(meterSpend(endMeter(before, 0))).toEqual(guessed);
  });

  it('a model the table does not know: the live floor prices it at the lowest rates, the budget at the highest', () => {
    const meter = fold([usage('a', tokens(1_000_000, 0), { model: 'claude-unheard-of-9' })]);
    expect(meterSpend(meter).cost_usd).toBeCloseTo(UNKNOWN_MODEL_FLOOR.input, 10);
    expect(meterCeiling(meter).cost_usd).toBeCloseTo(UNKNOWN_MODEL_PRICE.input, 10);
    expect(UNKNOWN_MODEL_FLOOR).toMatchObject({ input: 0.1, output: 0.5 });
  });

  it.each(['success', 'denied-tool'])(
    'the live figure never passes the one the run ends at: every prefix of the recorded %s stream (issue 38 item 9)',
    (name) => {
      const events = eventsOf(name);
      const final = meterSpend(endMeter(fold(events), 1000)).cost_usd;
      expect(final).toBeGreaterThan(0);
      for (let n = 0; n < events.length; n++)
        expect(meterSpend(fold(events.slice(0, n))).cost_usd, `after ${n} events`).toBeLessThanOrEqual(final);
    },
  );

  it.each<[string, StreamEvent[], Partial<Spend>]>([
    [
      'the largest count of each kind across a message’s lines',
      [usage('a', tokens(10, 1, 500)), usage('a', tokens(10, 40, 0))],
      { ...tokens(10, 40, 500), turns: 1 },
    ],
    [
      "a subagent's messages cost but are not the agent's turns",
      [usage('a', tokens(1, 1)), usage('b', tokens(1, 1), { subagent: true })],
      { ...tokens(2, 2), turns: 1 },
    ],
    [
      'a result without model_usage_since_last_result (an error result) leaves the estimate standing',
      [usage('a', tokens(100, 10)), result({ numTurns: 1, durationMs: 50 })],
      { ...tokens(100, 10), turns: 1, duration_ms: 50 },
    ],
    [
      "a result's per-model usage replaces the estimate of everything before it",
      [
        usage('a', tokens(100, 10)),
        result({
          numTurns: 3,
          durationMs: 50,
          modelUsageSinceLast: [{ model: 'claude-opus-5-5', ...tokens(150, 60), costUsd: 0.25 }],
        }),
        usage('b', tokens(5, 1)),
      ],
      { ...tokens(155, 61), turns: 4, duration_ms: 50 },
    ],
  ])('%s', (_label, events, expected) => {
    const got = meterSpend(fold(events));
    expect(got).toMatchObject({ ...expected, calls: 1 });
  });

  it('a per-model entry without a cost is priced by the table, and marked estimated', () => {
    const meter = fold([
      result({ modelUsageSinceLast: [{ model: 'claude-haiku-4-5', ...tokens(1_000_000, 0) }] }),
    ]);
    expect(meterSpend(meter)).toMatchObject({ cost_usd: 1, estimated: true });
  });

  it('a resumed run counts on from its state; a process that wrote no result counts its wall time', () => {
    const before = spend({ ...tokens(1, 2), cost_usd: 0.5, turns: 3, duration_ms: 1000, calls: 1 });
    const killed = endMeter(fold([usage('a', tokens(1_000_000, 0))], before), 4000);
    expect(meterSpend(killed)).toEqual(
      spend({
        ...tokens(1_000_001, 2),
        cost_usd: 4.5,
        estimated: true,
        turns: 4,
        duration_ms: 5000,
        calls: 2,
      }),
    );
    const finished = endMeter(fold([result({ durationMs: 70, modelUsageSinceLast: [] })], before), 4000);
    expect(meterSpend(finished)).toMatchObject({ duration_ms: 1070, estimated: false, calls: 2 });
  });

  it('returns the same meter for events that say nothing about usage', () => {
    const meter = startMeter();
    expect(meterEvent(meter, { kind: 'text', text: 'x' })).toBe(meter);
  });
});

describe("the supervisor's calls", () => {
  it.each<[string, Parameters<typeof addSupervisorCall>[1], Partial<Spend>]>([
    [
      "Claude Code's total cost and per-model tokens",
      {
        durationMs: 900,
        model: null,
        result: result({
          costUsd: 0.01,
          numTurns: 1,
          durationMs: 800,
          usage: tokens(1, 1),
          modelUsage: [{ model: 'claude-opus-5-5', ...tokens(300, 20, 5, 7), costUsd: 0.01 }],
        }),
      },
      { ...tokens(300, 20, 5, 7), cost_usd: 0.01, estimated: false, turns: 1, duration_ms: 800, calls: 1 },
    ],
    [
      'only a usage: list price of the supervisor model',
      { durationMs: 900, model: 'claude-haiku-4-5', result: result({ usage: tokens(1_000_000, 0) }) },
      { ...tokens(1_000_000, 0), cost_usd: 1, estimated: true, turns: 1, duration_ms: 900, calls: 1 },
    ],
    [
      'no result (it failed or timed out): the call and its time, no cost',
      { durationMs: 30_000, model: null },
      { cost_usd: 0, turns: 0, duration_ms: 30_000, calls: 1 },
    ],
  ])('%s', (_label, call, expected) => {
    expect(addSupervisorCall(NO_SPEND, call)).toEqual(spend(expected));
  });
});

describe('the cost budget', () => {
  const agent = spend({ cost_usd: 0.3 });
  const supervisor = spend({ cost_usd: 0.25, estimated: true });

  it.each<[string, number | null, string | null]>([
    ['no budget', null, null],
    ['within it', 1, null],
    ['exactly at it (not passed)', 0.55, null],
    [
      'passed by agent and supervisor together',
      0.5,
      'cost budget of $0.5000 passed: the run has cost $0.5500 (agent $0.3000, supervisor $0.2500, partly estimated)',
    ],
  ])('%s', (_label, max, expected) => {
    expect(budgetPassed(max, agent, supervisor)).toBe(expected);
  });

  it.each([
    ['2.50', 2.5],
    ['$0.05', 0.05],
    [' 3 ', 3],
    ['.5', 0.5],
  ])('--max-cost %j is %d USD', (text, usd) => {
    expect(parseMaxCost(text)).toBe(usd);
  });

  it.each(['0', '0.00', '-1', 'abc', '', '1e3', '2,50', 'Infinity', '$'])(
    '--max-cost %j is refused',
    (text) => {
      let error: unknown;
      try {
        parseMaxCost(text);
      } catch (e) {
        error = e;
      }
      expect(isAgentboxError(error) && error.code).toBe('USAGE');
      expect((error as Error).message).toBe(
        `invalid --max-cost ${JSON.stringify(text)}: expected an amount in USD`,
      );
    },
  );

  it('a Tally folds the stream and the supervisor, and says when the budget is passed', () => {
    const tally = new Tally({ agent: spend({ cost_usd: 0.01 }), supervisor: NO_SPEND }, 0.02, null);
    expect(tally.event({ kind: 'text', text: 'x' })).toBe(false);
    expect(tally.passed()).toBeNull();
    tally.supervisorCall({ durationMs: 5, result: result({ costUsd: 0.015 }) });
    expect(tally.usage().supervisor).toMatchObject({ calls: 1, cost_usd: 0.015 });
    expect(tally.passed()).toMatch(/^cost budget of \$0\.0200 passed: the run has cost \$0\.0250/);
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '$0'],
    [0.00004, '<$0.0001'],
    [0.00048, '$0.0005'],
    [0.0123, '$0.0123'],
    [0.0036000000000000003, '$0.0036'],
    [0.5, '$0.50'],
    [0.12, '$0.12'],
    [0.123, '$0.123'],
    [0.999999, '$1.00'],
    [12.345, '$12.35'],
  ])('%d → %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });
});

describe('state.json usage', () => {
  const base = {
    schema_version: 1,
    status: 'DONE',
    pid: null,
    pid_start: null,
    claude_pid: null,
    claude_pid_start: null,
    session_id: null,
    worktree_path: null,
    branch: null,
    started_at: '2025-11-22T10:00:00.000Z',
    ended_at: null,
    last_heartbeat: null,
    config_hash: 'h',
    failure: null,
    tool_calls: 0,
    updated_at: '2025-11-22T10:00:00.000Z',
  };

  it('reads usage, the Claude Code version and the model used; missing counts are 0', () => {
    const state = migrateState({
      ...base,
      usage: { agent: { input_tokens: 5, cost_usd: 0.1, estimated: true }, supervisor: {} },
      claude_version: '2.1.330',
      model_used: 'claude-opus-5-5',
    });
    expect(state.usage).toEqual({
      agent: spend({ input_tokens: 5, cost_usd: 0.1, estimated: true }),
      supervisor: NO_SPEND,
    });
    expect(state).toMatchObject({ claude_version: '2.1.330', model_used: 'claude-opus-5-5' });
  });

  it('a state from before usage was recorded has none', () => {
    expect(migrateState(base).usage).toBeUndefined();
  });

  it.each([
    [{ agent: { cost_usd: -1 } }, '"cost_usd" must be a number ≥ 0'],
    [{ agent: { input_tokens: 1.5 } }, '"input_tokens" must be a whole number ≥ 0'],
    [{ supervisor: 'lots' }, '"usage.supervisor" is not an object'],
  ])('refuses a damaged usage %j', (value, message) => {
    expect(() => migrateState({ ...base, usage: value })).toThrow(message);
  });

  it('addSpend adds field by field', () => {
    expect(addSpend(spend({ turns: 1, cost_usd: 0.5 }), { turns: 2, estimated: true })).toEqual(
      spend({ turns: 3, cost_usd: 0.5, estimated: true }),
    );
  });
});
