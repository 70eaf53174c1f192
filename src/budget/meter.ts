import type { StreamEvent, TokenUsage } from '../claude/stream.js';
import type { Spend } from '../ledger/types.js';
import { estimateCost } from './prices.js';
import { addSpend, NO_SPEND, spendOfModels } from './spend.js';

/**
 * Claude Code's own rule for output it has not been told the size of (a call cut mid-answer): a
 * token per 4 characters of what streamed.
 */
const CHARS_PER_TOKEN = 4;

interface Message {
  readonly model: string;
  readonly usage: TokenUsage;
  readonly cacheWrite1h: number;
  readonly outputChars: number;
}

/**
 * The agent's spend while one claude process runs, folded from its stream. NOTE: Claude Code
 * states usage and cost only on a result line, and a headless run has one, at its end. Until then
 * every API message seen is estimated from its usage and list price (src/budget/prices.ts); a
 * result's `model_usage_since_last_result` then replaces the estimate of everything before it
 * (Claude Code states each call on exactly one result, also across resumes).
 */
export interface Meter {
  /** What the run's earlier processes spent (state.json when this one started). */
  readonly base: Spend;
  /** What this process's result lines stated. */
  readonly stated: Spend;
  /** Messages no result has stated yet, by message id. */
  readonly pending: Readonly<Record<string, Message>>;
  /** The agent's own messages (not subagents') since the last result: turns not counted yet. */
  readonly newTurns: number;
  readonly results: number;
}

export const startMeter = (base: Spend = NO_SPEND): Meter => ({
  base,
  stated: NO_SPEND,
  pending: {},
  newTurns: 0,
  results: 0,
});

const max = (a: TokenUsage, b: TokenUsage): TokenUsage => ({
  input_tokens: Math.max(a.input_tokens, b.input_tokens),
  output_tokens: Math.max(a.output_tokens, b.output_tokens),
  cache_read_input_tokens: Math.max(a.cache_read_input_tokens, b.cache_read_input_tokens),
  cache_creation_input_tokens: Math.max(a.cache_creation_input_tokens, b.cache_creation_input_tokens),
});

/** Folds one stream event in; returns the same meter when the event says nothing about usage. */
export function meterEvent(meter: Meter, event: StreamEvent): Meter {
  if (event.kind === 'usage') {
    const seen = meter.pending[event.messageId];
    // A message's lines (one per content block) repeat its usage: the largest count of each kind holds.
    const message: Message = seen
      ? {
          model: seen.model || event.model,
          usage: max(seen.usage, event.usage),
          cacheWrite1h: Math.max(seen.cacheWrite1h, event.cacheWrite1h),
          outputChars: seen.outputChars + event.outputChars,
        }
      : {
          model: event.model,
          usage: event.usage,
          cacheWrite1h: event.cacheWrite1h,
          outputChars: event.outputChars,
        };
    return {
      ...meter,
      pending: { ...meter.pending, [event.messageId]: message },
      newTurns: meter.newTurns + (seen || event.subagent ? 0 : 1),
    };
  }
  if (event.kind !== 'result') return meter;
  const models = event.modelUsageSinceLast ? spendOfModels(event.modelUsageSinceLast) : NO_SPEND;
  const stated = addSpend(addSpend(meter.stated, models), {
    turns: event.numTurns ?? 0,
    duration_ms: event.durationMs ?? 0,
  });
  return {
    ...meter,
    stated,
    // A result that does not say what it covers (an error result, an older Claude Code) leaves the estimates standing.
    pending: event.modelUsageSinceLast ? {} : meter.pending,
    newTurns: 0,
    results: meter.results + 1,
  };
}

/** The estimate of messages no result has stated: list price, output at least its text's size. */
function estimate(message: Message): Partial<Spend> {
  const output = Math.max(message.usage.output_tokens, Math.ceil(message.outputChars / CHARS_PER_TOKEN));
  const usage = { ...message.usage, output_tokens: output };
  const cost = estimateCost(message.model, usage, message.cacheWrite1h);
  return { ...usage, cost_usd: cost, estimated: cost > 0 };
}

/** The run's agent spend so far: earlier processes, then this one (one call). */
export function meterSpend(meter: Meter): Spend {
  const pending = Object.values(meter.pending).reduce((sum, m) => addSpend(sum, estimate(m)), NO_SPEND);
  return addSpend(addSpend(addSpend(meter.base, meter.stated), pending), { turns: meter.newTurns, calls: 1 });
}

/** Once the process has ended: one that wrote no result line (killed, stopped) counts its wall time. */
export function endMeter(meter: Meter, wallMs: number): Meter {
  return meter.results > 0 ? meter : { ...meter, stated: addSpend(meter.stated, { duration_ms: wallMs }) };
}
