import type { ModelUsage, StreamEvent, TokenUsage } from './events.js';
import { isObject, type Json, num, str } from './fields.js';

/** Token counts from a `usage` object; a count that is missing or not a number is 0. */
export function tokenUsage(value: unknown, keys: readonly [string, string, string, string]): TokenUsage {
  const o = isObject(value) ? value : {};
  const count = (key: string) => Math.max(0, num(o[key]) ?? 0);
  return {
    input_tokens: count(keys[0]),
    output_tokens: count(keys[1]),
    cache_read_input_tokens: count(keys[2]),
    cache_creation_input_tokens: count(keys[3]),
  };
}
export const API_KEYS = [
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
] as const;
const MODEL_USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
] as const;

/** An assistant line's usage, with the size of what it says (see the 'usage' event). */
export function usageEvent(value: Json): StreamEvent[] {
  const message = isObject(value.message) ? value.message : undefined;
  const id = str(message?.id);
  if (!message || !id || !isObject(message.usage)) return [];
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const chars = blocks.reduce((sum, b) => {
    const said =
      str(b.text) ?? str(b.thinking) ?? (b.type === 'tool_use' ? JSON.stringify(b.input ?? {}) : '');
    return sum + said.length;
  }, 0);
  const cacheCreation = isObject(message.usage.cache_creation) ? message.usage.cache_creation : {};
  return [
    {
      kind: 'usage',
      messageId: id,
      model: str(message.model) ?? '',
      usage: tokenUsage(message.usage, API_KEYS),
      cacheWrite1h: Math.max(0, num(cacheCreation.ephemeral_1h_input_tokens) ?? 0),
      outputChars: chars,
      subagent: typeof value.parent_tool_use_id === 'string',
    },
  ];
}

/** `modelUsage`-shaped maps: model name → counts and costUSD. undefined when absent or not a map. */
export function modelUsages(value: unknown): ModelUsage[] | undefined {
  if (!isObject(value)) return undefined;
  return Object.entries(value).flatMap(([model, entry]): ModelUsage[] => {
    if (!isObject(entry)) return [];
    const costUsd = num(entry.costUSD);
    return [{ model, ...tokenUsage(entry, MODEL_USAGE_KEYS), ...(costUsd === undefined ? {} : { costUsd }) }];
  });
}
