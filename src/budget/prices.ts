import type { TokenUsage } from '../claude/stream.js';

/** USD per million tokens. */
export interface Price {
  readonly input: number;
  readonly output: number;
  /** Cache writes that live 5 minutes (the default) and 1 hour. */
  readonly cacheWrite: number;
  readonly cacheWrite1h: number;
  readonly cacheRead: number;
  /** A higher rate for prompts (input + cache) above a size, where the model has one. */
  readonly longPrompt?: { readonly above: number; readonly price: Price };
}

const tier = (input: number, output: number, cacheRead = input / 10): Price => ({
  input,
  output,
  cacheWrite: input * 1.25,
  cacheWrite1h: input * 2,
  cacheRead,
});

/**
 * List prices, copied from the model catalog built into Claude Code 2.1.330 (its `pricing_tiers`,
 * which Claude Code itself prices `total_cost_usd` with). Only for the estimate agentbox makes
 * before Claude Code states a cost: its result line always wins. A key matches anywhere in a
 * model id (provider forms such as `us.anthropic.claude-opus-4-5-…-v1:0` or `…@20251101`
 * included); the longest match wins.
 */
export const PRICES: Readonly<Record<string, Price>> = {
  'claude-3-5-haiku': tier(0.8, 4),
  'claude-haiku-4-5': tier(1, 5),
  'claude-haiku-5-5': {
    ...tier(0.1, 0.5),
    longPrompt: { above: 100_000, price: tier(0.5, 2.5) },
  },
  'claude-3-5-sonnet': tier(3, 15),
  'claude-3-7-sonnet': tier(3, 15),
  'claude-sonnet-4': tier(3, 15),
  'claude-sonnet-5': tier(2, 10, 0.2),
  'claude-sonnet-5-5': tier(2, 10, 0.1),
  // Opus 4 and 4.1 cost three times what later Opus 4 models do; `claude-opus-4-20250514` is 4.0.
  'claude-opus-4': tier(5, 25),
  'claude-opus-4-0': tier(15, 75),
  'claude-opus-4-1': tier(15, 75),
  'claude-opus-4-2': tier(15, 75),
  'claude-opus-4@': tier(15, 75),
  'claude-opus-5': tier(5, 25),
  'claude-opus-5-5': tier(4, 20, 0.2),
  'claude-fable-5': tier(10, 50, 1),
  'claude-fable-5-1': tier(10, 50, 0.25),
  'claude-fable-5-2': tier(8, 40, 0.2),
  'claude-mythos-5': tier(10, 50, 1),
  'claude-mythos-5-1': tier(10, 50, 0.25),
  'claude-mythos-5-2': tier(8, 40, 0.2),
};

const fields = ['input', 'output', 'cacheWrite', 'cacheWrite1h', 'cacheRead'] as const;
const rates = (f: (typeof fields)[number]) =>
  Object.values(PRICES).flatMap((p) => [p[f], ...(p.longPrompt ? [p.longPrompt.price[f]] : [])]);

/** The highest known rate of each kind: what a model missing from the table is priced at. */
export const UNKNOWN_MODEL_PRICE: Price = Object.fromEntries(
  fields.map((f) => [f, Math.max(...rates(f))]),
) as unknown as Price;

/** The lowest known rate of each kind: an unknown model's price where the estimate must be a floor. */
export const UNKNOWN_MODEL_FLOOR: Price = Object.fromEntries(
  fields.map((f) => [f, Math.min(...rates(f))]),
) as unknown as Price;

/** The price of a model by its id; a model the table does not know is priced at `unknown` (the highest rates). */
export function priceOf(model: string, unknown: Price = UNKNOWN_MODEL_PRICE): Price {
  const id = model.toLowerCase();
  let best: string | undefined;
  for (const key of Object.keys(PRICES))
    if (id.includes(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? unknown : PRICES[best]!;
}

/**
 * What one API call cost by list price, in USD. `cacheWrite1h`: the part of the cache writes kept
 * an hour; `unknown`: the price of a model the table does not know.
 */
export function estimateCost(
  model: string,
  usage: TokenUsage,
  cacheWrite1h = 0,
  unknown: Price = UNKNOWN_MODEL_PRICE,
): number {
  const base = priceOf(model, unknown);
  const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const p = base.longPrompt && prompt > base.longPrompt.above ? base.longPrompt.price : base;
  const hour = Math.min(cacheWrite1h, usage.cache_creation_input_tokens);
  return (
    (usage.input_tokens * p.input +
      usage.output_tokens * p.output +
      usage.cache_read_input_tokens * p.cacheRead +
      (usage.cache_creation_input_tokens - hour) * p.cacheWrite +
      hour * p.cacheWrite1h) /
    1_000_000
  );
}
