import { describe, expect, it } from 'vitest';
import {
  type Counters,
  decideByRules,
  nextCounters,
  type RuleOutcome,
  type StopFacts,
  type SupervisorConfig,
  type SupervisorMode,
} from '../../src/supervisor/rules.js';

const config = (mode: SupervisorMode, over: Partial<SupervisorConfig> = {}): SupervisorConfig => ({
  mode,
  maxIterations: 10,
  loopLimit: 3,
  ...over,
});
const counters = (iterations = 0, stuck = 0): Counters => ({ iterations, stuck });
const facts = (over: Partial<StopFacts> = {}): StopFacts => ({
  stopHookActive: false,
  backgroundTasks: 0,
  runningSubagents: 0,
  progress: 1,
  pending: 0,
  ...over,
});

const ALLOW_RULES: RuleOutcome = { kind: 'allow', reason: 'the agent finished and no rule objects' };
const ALLOW_OFF: RuleOutcome = { kind: 'allow', reason: 'supervisor off' };
const ASK: RuleOutcome = { kind: 'ask', final: false };
const ASK_FINAL: RuleOutcome = { kind: 'ask', final: true };
const INJECT: RuleOutcome = { kind: 'inject' };
const budget = (iteration: number, max: number, what: string): RuleOutcome => ({
  kind: 'hard_stop',
  failure: 'budget',
  reason: `iteration budget reached (${iteration}/${max}): ${what}`,
});
const loop = (times: number): RuleOutcome => ({
  kind: 'hard_stop',
  failure: 'supervisor',
  reason: `loop guard: the agent stopped ${times} times in a row without doing anything`,
});
const wait = (text: string): RuleOutcome => ({ kind: 'wait', text });

/** A Stop right after a blocked one, with no tool call since. */
const stuckStop = (over: Partial<StopFacts> = {}) => facts({ stopHookActive: true, progress: 0, ...over });
const MODES: SupervisorMode[] = ['claude', 'rules', 'off'];

describe('decideByRules', () => {
  it.each<[string, SupervisorConfig, Counters, StopFacts, RuleOutcome]>([
    // 1. Queued messages come first, in every mode, over the loop guard and background work.
    ...MODES.flatMap((mode): [string, SupervisorConfig, Counters, StopFacts, RuleOutcome][] => [
      [`${mode}: one queued message`, config(mode), counters(), facts({ pending: 1 }), INJECT],
      [`${mode}: several queued messages`, config(mode), counters(), facts({ pending: 3 }), INJECT],
      [
        `${mode}: a message beats the loop guard`,
        config(mode),
        counters(4, 2),
        stuckStop({ pending: 1 }),
        INJECT,
      ],
      [
        `${mode}: a message beats background work`,
        config(mode),
        counters(),
        facts({ backgroundTasks: 2, runningSubagents: 1, pending: 1 }),
        INJECT,
      ],
    ]),
    // …except at the iteration limit, where nothing may continue the agent: the messages stay queued.
    [
      'claude: a message at the limit is a hard stop, and stays queued',
      config('claude', { maxIterations: 3 }),
      counters(2),
      facts({ pending: 2 }),
      budget(3, 3, '2 queued message(s) not delivered; they stay queued'),
    ],
    [
      'rules: a message at the limit too',
      config('rules', { maxIterations: 3 }),
      counters(2),
      facts({ pending: 1 }),
      budget(3, 3, '1 queued message(s) not delivered; they stay queued'),
    ],
    [
      'off has no budget: a message past it is delivered',
      config('off', { maxIterations: 3 }),
      counters(5),
      facts({ pending: 1 }),
      INJECT,
    ],

    // 2. Mode off lets the agent stop, whatever else holds.
    ['off: allow', config('off'), counters(), facts(), ALLOW_OFF],
    ['off: allow at the budget', config('off', { maxIterations: 3 }), counters(5), facts(), ALLOW_OFF],
    ['off: allow in a loop', config('off'), counters(4, 9), stuckStop(), ALLOW_OFF],
    ['off: allow with background work', config('off'), counters(), facts({ backgroundTasks: 1 }), ALLOW_OFF],

    // 3. The budget: the Stop that reaches maxIterations may not continue the agent.
    [
      'rules: the Stop before the limit',
      config('rules', { maxIterations: 3 }),
      counters(1),
      facts(),
      ALLOW_RULES,
    ],
    ['claude: the Stop before the limit', config('claude', { maxIterations: 3 }), counters(1), facts(), ASK],
    [
      'rules: an agent that finished at the limit ends normally',
      config('rules', { maxIterations: 3 }),
      counters(2),
      facts(),
      { kind: 'allow', reason: 'the agent finished at the iteration limit (3/3)' },
    ],
    [
      'claude: at the limit the model is asked with final set',
      config('claude', { maxIterations: 3 }),
      counters(2),
      facts(),
      ASK_FINAL,
    ],
    ['claude: past the limit too', config('claude', { maxIterations: 3 }), counters(7), facts(), ASK_FINAL],
    [
      'claude: a budget of 1 makes the first Stop final',
      config('claude', { maxIterations: 1 }),
      counters(),
      facts(),
      ASK_FINAL,
    ],
    [
      'background work at the limit is a hard stop',
      config('claude', { maxIterations: 5 }),
      counters(4),
      facts({ backgroundTasks: 1 }),
      budget(5, 5, '1 background task(s) still running'),
    ],
    [
      'the loop guard at the limit is still the loop guard',
      config('claude', { maxIterations: 5 }),
      counters(4, 2),
      stuckStop(),
      loop(3),
    ],

    // 4. The loop guard: blocked, no progress, `stuck` reaching loopLimit.
    ['claude: stuck reaching the loop limit', config('claude'), counters(4, 2), stuckStop(), loop(3)],
    ['rules: stuck reaching the loop limit', config('rules'), counters(4, 2), stuckStop(), loop(3)],
    ['claude: stuck past the loop limit', config('claude'), counters(6, 5), stuckStop(), loop(6)],
    ['claude: a loop limit of 1', config('claude', { loopLimit: 1 }), counters(1), stuckStop(), loop(1)],
    ['claude: one short of the loop limit', config('claude'), counters(4, 1), stuckStop(), ASK],
    ['claude: stuck, but with progress', config('claude'), counters(4, 2), stuckStop({ progress: 1 }), ASK],
    [
      'claude: stuck, no progress, but not after a blocked Stop',
      config('claude'),
      counters(4, 2),
      stuckStop({ stopHookActive: false }),
      ASK,
    ],
    [
      'the loop guard beats background work',
      config('claude'),
      counters(4, 2),
      stuckStop({ runningSubagents: 1 }),
      loop(3),
    ],

    // 5. Background work running: wait, naming what runs.
    ...(['claude', 'rules'] as const).flatMap(
      (mode): [string, SupervisorConfig, Counters, StopFacts, RuleOutcome][] => [
        [
          `${mode}: one background task`,
          config(mode),
          counters(),
          facts({ backgroundTasks: 1 }),
          wait(
            '1 background task(s) still running: wait for it to finish and check the results before you finish.',
          ),
        ],
        [
          `${mode}: two subagents`,
          config(mode),
          counters(),
          facts({ runningSubagents: 2 }),
          wait(
            '2 subagent(s) still running: wait for them to finish and check the results before you finish.',
          ),
        ],
        [
          `${mode}: background tasks and a subagent`,
          config(mode),
          counters(),
          facts({ backgroundTasks: 3, runningSubagents: 1 }),
          wait(
            '3 background task(s) and 1 subagent(s) still running: wait for them to finish and check the results before you finish.',
          ),
        ],
      ],
    ),
    [
      'background work while blocked but making progress',
      config('claude'),
      counters(4, 2),
      stuckStop({ progress: 2, backgroundTasks: 1 }),
      wait(
        '1 background task(s) still running: wait for it to finish and check the results before you finish.',
      ),
    ],

    // 6. Nothing objects: rules allows, claude asks.
    ['rules: allow', config('rules'), counters(), facts(), ALLOW_RULES],
    ['rules: allow with no progress', config('rules'), counters(3), facts({ progress: 0 }), ALLOW_RULES],
    ['claude: ask', config('claude'), counters(), facts(), ASK],
    [
      'claude: ask after a blocked Stop with progress',
      config('claude'),
      counters(3),
      facts({ stopHookActive: true }),
      ASK,
    ],
  ])('%s', (_name, cfg, c, f, expected) => {
    expect(decideByRules(cfg, c, f)).toEqual(expected);
  });
});

describe('nextCounters', () => {
  it.each<[string, Counters, StopFacts, Counters]>([
    ['the first Stop', counters(), facts(), counters(1, 0)],
    [
      'a Stop with progress resets stuck',
      counters(3, 2),
      facts({ stopHookActive: true, progress: 4 }),
      counters(4, 0),
    ],
    ['a blocked Stop without progress grows stuck', counters(3, 0), stuckStop(), counters(4, 1)],
    ['and keeps growing it', counters(4, 1), stuckStop(), counters(5, 2)],
    [
      'an unblocked Stop without progress resets stuck',
      counters(5, 2),
      facts({ progress: 0 }),
      counters(6, 0),
    ],
    ['queued messages do not change the count', counters(1, 1), stuckStop({ pending: 1 }), counters(2, 2)],
    [
      'background work does not change the count',
      counters(1, 0),
      facts({ backgroundTasks: 2 }),
      counters(2, 0),
    ],
  ])('%s', (_name, c, f, expected) => {
    expect(nextCounters(c, f)).toEqual(expected);
  });

  it('a run of stuck Stops reaches the loop guard exactly at loopLimit', () => {
    const cfg = config('claude', { loopLimit: 3 });
    let c = counters();
    const outcomes: RuleOutcome['kind'][] = [];
    for (let i = 0; i < 4; i++) {
      const f = i === 0 ? facts({ progress: 0 }) : stuckStop();
      outcomes.push(decideByRules(cfg, c, f).kind);
      c = nextCounters(c, f);
    }
    expect(outcomes).toEqual(['ask', 'ask', 'ask', 'hard_stop']);
  });

  it('a run of Stops with background work reaches the budget exactly at maxIterations', () => {
    const cfg = config('rules', { maxIterations: 4 });
    const busy = facts({ backgroundTasks: 1 });
    let c = counters();
    const outcomes: RuleOutcome['kind'][] = [];
    for (let i = 0; i < 5; i++) {
      outcomes.push(decideByRules(cfg, c, busy).kind);
      c = nextCounters(c, busy);
    }
    expect(outcomes).toEqual(['wait', 'wait', 'wait', 'hard_stop', 'hard_stop']);
  });
});
