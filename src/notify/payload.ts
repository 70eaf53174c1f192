import { runIdOf } from '../ledger/names.js';
import type { RunState, RunType } from '../ledger/types.js';
import { terminalLine } from '../util/terminal-text.js';

/** What `runs.notify` gets on its standard input, one JSON object. Field names are stable. */
export interface NotifyPayload {
  /** ended: a run finished; waiting: an interactive session waits for the person. */
  readonly event: 'ended' | 'waiting';
  readonly run: string;
  readonly id: string;
  readonly type: RunType;
  readonly status: string;
  readonly failure: { readonly kind: string; readonly message: string } | null;
  readonly task: string;
  readonly duration_ms: number | null;
  readonly cost_usd: number | null;
  readonly tool_calls: number;
  /** Files the run changed (a fix run's patch); 0 for the others. */
  readonly changes: number;
  /** The run's report, absolute; null when it has none. */
  readonly report: string | null;
  /** The command to run next. */
  readonly next: string | null;
}

/** The payload for a run, from its state and what its end printed. Pure. */
export function notifyPayload(input: {
  readonly event: 'ended' | 'waiting';
  readonly name: string;
  readonly type: RunType;
  readonly task: string;
  readonly state: RunState;
  readonly changes: number;
  readonly report: string | null;
  readonly next: string | null;
}): NotifyPayload {
  const { state } = input;
  const started = Date.parse(state.started_at);
  const ended = state.ended_at ? Date.parse(state.ended_at) : Number.NaN;
  const usage = state.usage;
  return {
    event: input.event,
    run: input.name,
    id: runIdOf(input.name),
    type: input.type,
    status: state.status,
    failure: state.failure ? { kind: state.failure.kind, message: state.failure.message } : null,
    task: input.task,
    duration_ms: Number.isFinite(started) && Number.isFinite(ended) ? ended - started : null,
    cost_usd: usage ? usage.agent.cost_usd + usage.supervisor.cost_usd : null,
    tool_calls: state.tool_calls,
    changes: input.changes,
    report: input.report,
    next: input.next,
  };
}

/** Terminals known to show OSC 9 (iTerm2's) as a desktop notification; others ignore it, or print junk. */
const OSC9_TERMINALS = new Set(['iTerm.app', 'WezTerm', 'ghostty']);

/**
 * Terminals that show kitty's OSC 99 instead: kitty itself (it sets TERM, not TERM_PROGRAM) and
 * VS Code's terminal (microsoft/vscode#294247).
 */
function showsOsc99(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.TERM === 'xterm-kitty' || env.TERM_PROGRAM === 'kitty' || env.TERM_PROGRAM === 'vscode';
}

/**
 * What to write to the person's terminal to get their attention: a BEL (every terminal: a sound,
 * a flash or a tab marker), preceded by a desktop notification where the terminal is known to show
 * one — OSC 9 (`ESC ] 9 ; text BEL`), or OSC 99 (`ESC ] 99 ; ; text ESC \`) in kitty and VS Code.
 * Pure; the caller writes it only to a terminal, never into a pipe.
 */
export function terminalAlert(text: string, env: Readonly<Record<string, string | undefined>>): string {
  // Control characters in the text would end the sequence early, a bidi override would reorder
  // the notification: one line, through the one sanitiser (src/util/terminal-text.ts).
  const clean = terminalLine(text).slice(0, 200);
  if (showsOsc99(env)) return `\u001b]99;;${clean}\u001b\\\u0007`;
  const osc9 = OSC9_TERMINALS.has(env.TERM_PROGRAM ?? '') ? `\u001b]9;${clean}\u0007` : '';
  return `${osc9}\u0007`;
}

/** The one line a notification says: `agentbox: <id> REVIEW — <task>`. */
export function alertText(payload: NotifyPayload): string {
  const what = payload.event === 'waiting' ? 'waits for you' : payload.status;
  return `agentbox: ${payload.id} ${what} — ${payload.task.split('\n')[0]}`;
}
