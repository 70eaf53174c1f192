import type { StreamEvent, TokenUsage } from '../claude/stream.js';
import type { Spend } from '../ledger/types.js';
import { estimateCost, UNKNOWN_MODEL_FLOOR } from './prices.js';
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
 *
 * Two estimates (issue 38 item 9): the stream's lines carry a message's usage as it started (its
 * input and cache counts final, its output 1), so what they say is a floor of what the result
 * will state — the figure recorded and shown while the run goes on, which never passes the one it
 * ends at. The budget guesses the output from its text (meterCeiling): a guess can be above the
 * truth (a scripted model said 10 tokens for a 3,000-character Write; the guess was 750, $0.0162
 * shown live for a run that ended at $0.0007), and the budget is the side where erring high is safe.
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
  /** The process has ended: what no result stated will never be (killed, stopped, an error result). */
  readonly ended: boolean;
}

export const startMeter = (base: Spend = NO_SPEND): Meter => ({
  base,
  stated: NO_SPEND,
  pending: {},
  newTurns: 0,
  results: 0,
  ended: false,
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

/**
 * The estimate of a message no result has stated, at list price: its usage as the stream said it,
 * or (`guess`) with its output at least its text's size.
 */
function estimate(message: Message, guess: boolean): Partial<Spend> {
  const fromText = guess ? Math.ceil(message.outputChars / CHARS_PER_TOKEN) : 0;
  const usage = { ...message.usage, output_tokens: Math.max(message.usage.output_tokens, fromText) };
  // A floor prices a model the table does not know at the lowest rates, a guess at the highest.
  const cost = estimateCost(
    message.model,
    usage,
    message.cacheWrite1h,
    guess ? undefined : UNKNOWN_MODEL_FLOOR,
  );
  return { ...usage, cost_usd: cost, estimated: cost > 0 };
}

/**
 * The run's agent spend so far: earlier processes, then this one (one call). While the process
 * runs, a floor of what it will state; once it has ended, what it never stated with its output
 * guessed from its text.
 */
export function meterSpend(meter: Meter): Spend {
  return spendOf(meter, meter.ended);
}

/** What the budget counts: the output of messages not yet stated guessed from their text. */
export function meterCeiling(meter: Meter): Spend {
  return spendOf(meter, true);
}

function spendOf(meter: Meter, guess: boolean): Spend {
  const pending = Object.values(meter.pending).reduce(
    (sum, m) => addSpend(sum, estimate(m, guess)),
    NO_SPEND,
  );
  return addSpend(addSpend(addSpend(meter.base, meter.stated), pending), { turns: meter.newTurns, calls: 1 });
}

/**
 * Once the process has ended: the messages no result stated count their output as guessed from
 * their text (Claude Code's own rule for output it was not told the size of: a call cut
 * mid-answer), and a process that wrote no result line (killed, stopped) counts its wall time.
 */
export function endMeter(meter: Meter, wallMs: number): Meter {
  const stated = meter.results > 0 ? meter.stated : addSpend(meter.stated, { duration_ms: wallMs });
  return { ...meter, stated, ended: true };
}
