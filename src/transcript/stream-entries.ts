import { contentEvents } from '../claude/stream/content.js';
import { isObject, type Json, num, str } from '../claude/stream/fields.js';
import { CUT_AT, cutInput, cutText, type Entry, type LineRef } from './entry.js';

/**
 * The entries of one line of claude's output: stream-json (`raw/stream.jsonl`, headless runs) or
 * Claude Code's own session transcript (`raw/transcript.jsonl`, interactive sessions). Both carry
 * `assistant` lines with text and tool_use blocks and `user` lines with tool_result blocks and a
 * `timestamp`; the transcript also has the person's prompts as user text, and lines of its own
 * (summaries, file snapshots) that say nothing a person reads here. A `permission_denied` line
 * says again what its tool_result says (marked refused from the line's tool_result_meta). Pure;
 * never throws.
 */
export interface LineInput {
  readonly text: string;
  /** Where the line is, for entry ids and to read a cut text back whole. */
  readonly ref: LineRef;
  /** The id's prefix: `s` for stream.jsonl, `t` for transcript.jsonl. */
  readonly prefix: string;
  /** The time of the last line that had one: lines without (system, result) take it. */
  readonly lastAt: string | null;
  /** How long a text may be before it is cut; Infinity reads it whole. */
  readonly max?: number;
}

export interface LineEntries {
  readonly entries: Entry[];
  /** This line's own time, when it has one. */
  readonly at: string | null;
}

type Draft = Entry extends infer E ? (E extends Entry ? Omit<E, 'id' | 'at'> : never) : never;

export function lineEntries(input: LineInput): LineEntries {
  let value: unknown;
  try {
    value = JSON.parse(input.text);
  } catch {
    return { entries: [], at: null };
  }
  if (!isObject(value)) return { entries: [], at: null };
  const own = str(value.timestamp);
  const at = own !== undefined && !Number.isNaN(Date.parse(own)) ? own : null;
  const drafts = draftsOf(value, input.ref, input.max ?? CUT_AT);
  const entries = drafts.map(
    (d, i) => ({ ...d, id: `${input.prefix}${input.ref.offset}.${i}`, at: at ?? input.lastAt }) as Entry,
  );
  return { entries, at };
}

function draftsOf(value: Json, ref: LineRef, max: number): Draft[] {
  const type = value.type;
  if (type === 'result') {
    const cost = num(value.total_cost_usd);
    const text = cutText(str(value.result) ?? '', max, ref);
    return [{ kind: 'result', is_error: value.is_error === true, cost_usd: cost ?? null, ...text }];
  }
  if (type !== 'assistant' && type !== 'user') return [];
  const message = value.message;
  if (type === 'user' && isObject(message) && typeof message.content === 'string')
    return message.content.trim() === '' ? [] : [{ kind: 'user', ...cutText(message.content, max, ref) }];
  const drafts: Draft[] = [];
  for (const e of contentEvents(type, message, value.tool_result_meta)) {
    if (e.kind === 'text') drafts.push({ kind: 'text', ...cutText(e.text, max, ref) });
    else if (e.kind === 'tool_use')
      drafts.push({ kind: 'tool_call', tool_use_id: e.id, tool: e.name, input: cutInput(e.input, max) });
    else if (e.kind === 'tool_result')
      drafts.push({
        kind: 'tool_result',
        tool_use_id: e.toolUseId,
        is_error: e.isError,
        ...(e.refusedBy ? { refused_by: e.refusedBy } : {}),
        ...cutText(e.text, max, ref),
      });
  }
  if (type === 'user') drafts.push(...userTexts(message, max, ref));
  return drafts;
}

/** The text blocks of a user message (contentEvents reads only its tool results). */
function userTexts(message: unknown, max: number, ref: LineRef): Draft[] {
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return message.content
    .filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .filter((b) => (b.text as string).trim() !== '')
    .map((b) => ({ kind: 'user', ...cutText(b.text as string, max, ref) }));
}
