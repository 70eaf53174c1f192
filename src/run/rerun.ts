import { formatUsd } from '../budget/format.js';
import { formatDuration } from '../config/duration.js';
import { type Config, runTimeout } from '../config/schema.js';
import { AgentboxError } from '../errors.js';
import { runIdOf } from '../ledger/index.js';
import type { RunMeta, RunOrigin } from '../ledger/types.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { loadTrustedConfig } from '../trust/index.js';
import type { Env } from '../util/env.js';
import { checkTask, type RunOptions, timeoutMs } from './begin/options.js';
import { HEADLESS_TYPES, type HeadlessType } from './begin/tier.js';

// `agentbox rerun <run>`: the same task started anew, with today's templates and configuration. The
// old run is read, never written; the new run's meta.yaml says `rerun_of: <old run>`.

/** The limits today's configuration gives a run: what a carried limit must be stricter than. */
export interface TodayLimits {
  readonly timeout_ms: number;
  readonly supervisor: SupervisorMode;
  readonly max_iterations: number;
  /** null: no budget. */
  readonly max_cost_usd: number | null;
}

/** The limits of `config` as a run started now without flags would get them. */
export function todayLimits(config: Config): TodayLimits {
  return {
    timeout_ms: timeoutMs(undefined, runTimeout(config)),
    supervisor: config.supervisor.mode,
    max_iterations: config.supervisor.max_iterations,
    max_cost_usd: config.supervisor.max_cost,
  };
}

/** rerunPlan against the configuration in effect for `repoRoot` now (trusted or not, as a run would take it). */
export function rerunPlanHere(repoRoot: string, env: Env, meta: RunMeta): RerunPlan {
  return rerunPlan(meta, todayLimits(loadTrustedConfig({ repoRoot, env }).config));
}

/** What a rerun takes from the run it reruns. */
export interface RerunPlan {
  /** The old run's name: the new run's `rerun_of`. */
  readonly of: string;
  readonly type: HeadlessType;
  readonly task: string;
  /**
   * What carries over, as the flags a person would type (checked again, as typed): the model
   * chosen for the old run, and each of its limits that is stricter than today's configuration's.
   */
  readonly carried: Pick<RunOptions, 'model' | 'timeout' | 'supervisor' | 'maxIterations' | 'maxCost'>;
  /** Today's value of each limit carried, for saying what it replaces. */
  readonly today: TodayLimits;
  /** A fetched run: where its task comes from. Its task is that publication's word, so a person confirms it. */
  readonly fetched: RunOrigin | null;
}

/**
 * The plan for rerunning the run of `meta`, or an error saying why it cannot be. Pure.
 * A fetched run's options (its model, limits) are the remote's claims: only its type and task are
 * taken, and only after a person confirmed them (the command's and the page's job).
 */
export function rerunPlan(meta: RunMeta, today: TodayLimits): RerunPlan {
  const type = meta.type;
  if (!(HEADLESS_TYPES as readonly string[]).includes(type)) {
    throw new AgentboxError(
      'USAGE',
      `${meta.run_name} is an interactive session: agentbox rerun takes scout, plan, fix and review runs`,
      {
        hint: `start a new session (agentbox start), or go on in its own: agentbox start --resume ${runIdOf(meta.run_name)}`,
      },
    );
  }
  // The same checks as a task typed on the command line (it is passed to claude as one argument).
  checkTask(meta.task);
  const fetched = meta.origin ?? null;
  return {
    of: meta.run_name,
    type: type as HeadlessType,
    task: meta.task,
    carried: fetched ? {} : carriedOptions(meta, today),
    today,
    fetched,
  };
}

/** `rules` < `claude` < `off`: the order of src/config/rules.ts, strictest first. */
const STRICTNESS: readonly SupervisorMode[] = ['rules', 'claude', 'off'];

/**
 * meta.yaml `options`, back into flags: the model chosen for the run (it is recorded only when
 * one was: --model, or an attempt's --models), and each limit stricter than today's (the rule of
 * src/config/rules.ts: a limit takes the stricter value), so a rerun never goes further than the
 * old run could, nor than today's configuration allows. A value agentbox does not write there is
 * left out; an attempt's budget was its whole group's, not one run's. Pure.
 */
function carriedOptions(meta: RunMeta, today: TodayLimits): RerunPlan['carried'] {
  const o = meta.options ?? {};
  const { model, timeout_ms: ms, supervisor, max_iterations: max, max_cost_usd: cost } = o;
  const positive = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;
  const mode = STRICTNESS.indexOf(supervisor as SupervisorMode);
  return {
    ...(typeof model === 'string' && model.trim() !== '' ? { model } : {}),
    ...(Number.isSafeInteger(ms) && positive(ms) && ms < today.timeout_ms ? { timeout: `${ms}ms` } : {}),
    ...(mode >= 0 && mode < STRICTNESS.indexOf(today.supervisor) ? { supervisor: supervisor as string } : {}),
    ...(Number.isSafeInteger(max) && positive(max) && max < today.max_iterations
      ? { maxIterations: String(max) }
      : {}),
    ...(positive(cost) && o.group === undefined && (today.max_cost_usd === null || cost < today.max_cost_usd)
      ? { maxCost: String(cost) }
      : {}),
  };
}

/** The flags the new run starts with: what was carried over, each replaced by the one typed now. Pure. */
export function rerunOptions<O extends RunOptions>(plan: RerunPlan, typed: O): O {
  const set = Object.fromEntries(Object.entries(typed).filter(([, v]) => v !== undefined));
  return { ...plan.carried, ...set } as O;
}

/** `model opus · max iterations 7 (today: 50)`: what was carried over and not typed again now. Pure. */
export function carriedText(plan: RerunPlan, typed: RunOptions): string {
  const { carried: c, today: t } = plan;
  const usd = (v: number | null) => (v === null ? 'none' : formatUsd(v));
  const parts: string[] = [];
  if (c.model && typed.model === undefined) parts.push(`model ${c.model}`);
  if (c.timeout && typed.timeout === undefined)
    parts.push(
      `timeout ${formatDuration(Number.parseInt(c.timeout, 10))} (today: ${formatDuration(t.timeout_ms)})`,
    );
  if (c.supervisor && typed.supervisor === undefined)
    parts.push(`supervisor ${c.supervisor} (today: ${t.supervisor})`);
  if (c.maxIterations && typed.maxIterations === undefined)
    parts.push(`max iterations ${c.maxIterations} (today: ${t.max_iterations})`);
  if (c.maxCost && typed.maxCost === undefined)
    parts.push(`budget ${formatUsd(Number(c.maxCost))} (today: ${usd(t.max_cost_usd)})`);
  return parts.join(' · ');
}
