import type { ModelUsage, ResultEvent, TokenUsage } from '../claude/stream.js';
import type { Spend } from '../ledger/types.js';
import { estimateCost } from './prices.js';

export const NO_SPEND: Spend = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cost_usd: 0,
  estimated: false,
  turns: 0,
  duration_ms: 0,
  calls: 0,
});

/** Field by field; `estimated` if either is. */
export function addSpend(a: Spend, b: Partial<Spend>): Spend {
  return {
    input_tokens: a.input_tokens + (b.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b.output_tokens ?? 0),
    cache_read_input_tokens: a.cache_read_input_tokens + (b.cache_read_input_tokens ?? 0),
    cache_creation_input_tokens: a.cache_creation_input_tokens + (b.cache_creation_input_tokens ?? 0),
    cost_usd: a.cost_usd + (b.cost_usd ?? 0),
    estimated: a.estimated || b.estimated === true,
    turns: a.turns + (b.turns ?? 0),
    duration_ms: a.duration_ms + (b.duration_ms ?? 0),
    calls: a.calls + (b.calls ?? 0),
  };
}

const tokens = (u: TokenUsage): Partial<Spend> => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  cache_read_input_tokens: u.cache_read_input_tokens,
  cache_creation_input_tokens: u.cache_creation_input_tokens,
});

const hasTokens = (u: TokenUsage) =>
  u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens > 0;

/** A result's per-model usage: Claude Code's cost of each model, or its list price where it gave none. */
export function spendOfModels(models: readonly ModelUsage[]): Spend {
  return models.reduce(
    (sum, m) =>
      addSpend(sum, {
        ...tokens(m),
        cost_usd: m.costUsd ?? estimateCost(m.model, m),
        estimated: m.costUsd === undefined && hasTokens(m),
      }),
    NO_SPEND,
  );
}

/**
 * One supervisor `claude -p` (a fresh process, so its result's totals are its own): Claude Code's
 * total cost, else its per-model costs, else list prices. A call that printed no result (it failed,
 * timed out) adds only itself and its time: what it spent is not known.
 */
export function addSupervisorCall(
  spend: Spend,
  call: { readonly result?: ResultEvent; readonly durationMs: number; readonly model: string | null },
): Spend {
  const { result } = call;
  const once = { calls: 1, duration_ms: result?.durationMs ?? call.durationMs };
  if (!result) return addSpend(spend, once);
  const models = result.modelUsage?.length ? result.modelUsage : null;
  const byModels = models ? spendOfModels(models) : null;
  const usage = result.usage ?? null;
  const cost = result.costUsd ?? byModels?.cost_usd ?? (usage ? estimateCost(call.model ?? '', usage) : 0);
  return addSpend(spend, {
    ...(byModels ?? (usage ? tokens(usage) : {})),
    ...once,
    cost_usd: cost,
    estimated: result.costUsd === undefined && (byModels?.estimated ?? usage !== null),
    turns: result.numTurns ?? 1,
  });
}
