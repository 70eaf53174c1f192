export type SupervisorMode = 'claude' | 'rules' | 'off';
export const SUPERVISOR_MODES: readonly SupervisorMode[] = ['claude', 'rules', 'off'];

export interface SupervisorConfig {
  readonly mode: SupervisorMode;
  readonly maxIterations: number;
  /** How many Stops in a row with stop_hook_active and no tool call count as a loop. */
  readonly loopLimit: number;
}

/** What the supervisor knows when the agent is about to stop. */
export interface StopFacts {
  /** Claude Code says this Stop follows a Stop the supervisor blocked. */
  readonly stopHookActive: boolean;
  /** Background tasks Claude Code reports still running. */
  readonly backgroundTasks: number;
  /** Subagents started and not yet stopped. */
  readonly runningSubagents: number;
  /** Tool calls since the previous Stop. */
  readonly progress: number;
  /** Messages queued with `agentbox inject` and not delivered yet. */
  readonly pending: number;
}

export interface Counters {
  /** Stops decided so far (this one not included). */
  readonly iterations: number;
  /** Stops in a row that came back with no progress. */
  readonly stuck: number;
}

export type RuleOutcome =
  | { readonly kind: 'inject' }
  | { readonly kind: 'wait'; readonly text: string }
  | { readonly kind: 'hard_stop'; readonly failure: 'budget' | 'supervisor'; readonly reason: string }
  | { readonly kind: 'allow'; readonly reason: string }
  /** Ask the supervisor model; `final`: at the iteration limit, where it may no longer continue the agent. */
  | { readonly kind: 'ask'; readonly final: boolean };

/**
 * The rules, in order, for one Stop. Pure: (config, counters, facts) → outcome; the table of cases
 * is in test/unit/supervisor-rules.test.ts.
 * 1. Messages a person queued are delivered first, whatever the mode.
 * 2. Mode off: the agent decides when it is done.
 * 3. The loop guard: a blocked agent that keeps stopping without doing anything ends the run.
 * 4. Background work still running is not "done": the agent is told to wait for it.
 * 5. Mode rules: the agent decides; mode claude: ask the supervisor model.
 * The iteration budget: the Stop that reaches it may not continue the agent. Where the rules would
 * (a message, background work), it is a hard stop with a warning, and queued messages stay queued;
 * an agent that finished still ends normally, and the model is asked with `final` set.
 */
export function decideByRules(config: SupervisorConfig, counters: Counters, facts: StopFacts): RuleOutcome {
  const iteration = counters.iterations + 1;
  const atLimit = config.mode !== 'off' && iteration >= config.maxIterations;
  const budget = (what: string): RuleOutcome => ({
    kind: 'hard_stop',
    failure: 'budget',
    reason: `iteration budget reached (${iteration}/${config.maxIterations}): ${what}`,
  });
  if (facts.pending > 0) {
    return atLimit
      ? budget(`${facts.pending} queued message(s) not delivered; they stay queued`)
      : { kind: 'inject' };
  }
  if (config.mode === 'off') return { kind: 'allow', reason: 'supervisor off' };
  if (facts.stopHookActive && facts.progress === 0 && counters.stuck + 1 >= config.loopLimit) {
    return {
      kind: 'hard_stop',
      failure: 'supervisor',
      reason: `loop guard: the agent stopped ${counters.stuck + 1} times in a row without doing anything`,
    };
  }
  const running = facts.backgroundTasks + facts.runningSubagents;
  if (running > 0) {
    const what = [
      facts.backgroundTasks ? `${facts.backgroundTasks} background task(s)` : '',
      facts.runningSubagents ? `${facts.runningSubagents} subagent(s)` : '',
    ].filter(Boolean);
    if (atLimit) return budget(`${what.join(' and ')} still running`);
    return {
      kind: 'wait',
      text: `${what.join(' and ')} still running: wait for ${running === 1 ? 'it' : 'them'} to finish and check the results before you finish.`,
    };
  }
  if (config.mode === 'rules') {
    const reason = atLimit
      ? `the agent finished at the iteration limit (${iteration}/${config.maxIterations})`
      : 'the agent finished and no rule objects';
    return { kind: 'allow', reason };
  }
  return { kind: 'ask', final: atLimit };
}

/** The counters after a Stop: one more iteration; `stuck` grows on a blocked Stop without progress. */
export function nextCounters(counters: Counters, facts: StopFacts): Counters {
  const stuck = facts.stopHookActive && facts.progress === 0 ? counters.stuck + 1 : 0;
  return { iterations: counters.iterations + 1, stuck };
}
