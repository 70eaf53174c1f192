import { sandboxRefusalReason } from './content.js';
import type { ResultEvent, StreamEvent } from './events.js';
import { isObject, str } from './fields.js';

export interface Refusal {
  readonly toolUseId: string;
  readonly tool: string;
  readonly by: 'config' | 'hook' | 'skill' | 'sandbox' | 'gate' | 'other';
  readonly message: string;
  /** What the call asked for, cut to 200 characters (a command, a path). */
  readonly input?: string;
  /** When it was refused (the result line's time), when the stream says. */
  readonly at?: string;
}

/** A tool call's input for the log: the command or path when there is one, else its JSON, cut. */
function excerpt(input: unknown): string {
  const o = isObject(input) ? input : {};
  const text =
    str(o.command) ?? str(o.file_path) ?? str(o.path) ?? str(o.skill) ?? JSON.stringify(input ?? null);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export interface StreamSummary {
  sessionId: string | null;
  toolCalls: number;
  /** The most recent tool call still waiting for its result. */
  currentTool: string | null;
  lastText: string | null;
  result: ResultEvent | null;
  toolErrors: number;
  /** Tool calls without a result yet, oldest first (the model may call several at once). */
  /** Tool calls waiting for their result, with an excerpt of their input (for refusals). */
  openTools: readonly { readonly id: string; readonly name: string; readonly input: string }[];
  /** Tool calls Claude Code refused (its rules, a hook, a human-only command), in order. */
  refusals: readonly Refusal[];
}

export const EMPTY_SUMMARY: StreamSummary = Object.freeze({
  sessionId: null,
  toolCalls: 0,
  currentTool: null,
  lastText: null,
  result: null,
  toolErrors: 0,
  openTools: Object.freeze([]),
  refusals: Object.freeze([]),
});

/** Folds one event into the summary; returns the same object when nothing changed. */
export function summarize(summary: StreamSummary, event: StreamEvent): StreamSummary {
  switch (event.kind) {
    case 'init':
      return { ...summary, sessionId: event.sessionId };
    case 'tool_use': {
      const openTools = [
        ...summary.openTools,
        { id: event.id, name: event.name, input: excerpt(event.input) },
      ];
      return { ...summary, toolCalls: summary.toolCalls + 1, openTools, currentTool: event.name };
    }
    case 'tool_result': {
      const openTools = summary.openTools.filter((t) => t.id !== event.toolUseId);
      const call = summary.openTools.find((t) => t.id === event.toolUseId);
      const tool = call?.name ?? '';
      const refusals = event.refusedBy
        ? [
            ...summary.refusals,
            {
              toolUseId: event.toolUseId,
              tool,
              by: event.refusedBy,
              message: event.refusedBy === 'sandbox' ? sandboxRefusalReason(event.text) : event.text,
              ...(call?.input ? { input: call.input } : {}),
              ...(event.at ? { at: event.at } : {}),
            },
          ]
        : summary.refusals;
      return {
        ...summary,
        refusals,
        openTools,
        currentTool: openTools.at(-1)?.name ?? null,
        toolErrors: summary.toolErrors + (event.isError ? 1 : 0),
      };
    }
    case 'text':
      return { ...summary, lastText: event.text };
    case 'result':
      return { ...summary, result: event, sessionId: summary.sessionId ?? event.sessionId ?? null };
    default:
      return summary;
  }
}
