import type { RunState } from '../ledger/types.js';
import { toolCalls, toolTarget } from './live.js';

/** The tool calls of a run whose result was an error, and the last one in a line. */
export interface ToolErrors {
  readonly count: number;
  /** `Bash npm test: Error: Cannot find module 'tape'`; null: none yet. */
  readonly last: string | null;
}

export const NO_TOOL_ERRORS: ToolErrors = Object.freeze({ count: 0, last: null });

/** The failed tool calls a run's state.json records (at its end, and at each crash). Pure. */
export function toolErrorsOf(state: Pick<RunState, 'failed_tool_calls' | 'last_tool_error'>): ToolErrors {
  const count = state.failed_tool_calls ?? 0;
  return count === 0 ? NO_TOOL_ERRORS : { count, last: state.last_tool_error ?? null };
}

/** Words that mark the line of an error output that says what went wrong. */
const TELLING = /\b(error|cannot|can't|not found|no such|failed|failure|denied|fatal|exception|missing)\b/i;
const LINE_MAX = 120;

/**
 * The line of a failed call's output that says what went wrong: the first one naming an error,
 * else the first one; Claude Code's own "Exit code 1" and its tags are not it. Pure.
 */
export function errorLine(text: string): string {
  const lines = text
    .replace(/<\/?tool_use_error>/g, '')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '' && !/^Exit code -?\d+$/.test(l));
  const line = lines.find((l) => TELLING.test(l)) ?? lines[0] ?? text.trim().split('\n')[0] ?? '';
  return line.length > LINE_MAX ? `${line.slice(0, LINE_MAX - 1)}…` : line || '(no output)';
}

/**
 * Folds one tool result into the count. A refused call (Claude Code's rules, a hook, the sandbox,
 * the human gate) is not counted here: it is a refusal, reported as one. Pure.
 */
export function recordToolResult(
  errors: ToolErrors,
  call: { readonly name: string; readonly input: unknown } | undefined,
  result: { readonly isError: boolean; readonly refusedBy?: string | undefined; readonly text: string },
): ToolErrors {
  if (!result.isError || result.refusedBy) return errors;
  const target = toolTarget(call?.input);
  const what = `${call?.name || 'a tool'}${target ? ` ${target}` : ''}`;
  return { count: errors.count + 1, last: `${what}: ${errorLine(result.text)}` };
}

/**
 * `3 tool calls failed (last: Bash npm test: …)`, or null when none did; `clean` makes the agent's
 * part safe for where it goes (src/util/terminal-text.ts for a terminal). Pure.
 */
export function toolErrorsNote(
  errors: ToolErrors | null | undefined,
  clean: (text: string) => string = (t) => t,
): string | null {
  if (!errors || errors.count === 0) return null;
  return `${toolCalls(errors.count)} failed${errors.last ? ` (last: ${clean(errors.last)})` : ''}`;
}
