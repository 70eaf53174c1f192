/**
 * What claude's own screen says about it, for the moments its hooks say nothing (measured with
 * Claude Code 2.1.330 in a pty, test/e2e/interactive-state.test.ts):
 * - it sets the terminal title (OSC 0) to `✳ Claude Code` at its prompt and animates a spinner
 *   glyph (`◐ Claude Code`, `◑ …`) while it works;
 * - Esc during a turn cancels it and puts the prompt back, title `✳`, and no hook fires;
 * - the title is `✳` also while a dialog waits for the person (a permission question), so the
 *   title alone never makes a busy session idle: only after Esc, or a compaction, which fire no
 *   Stop of their own.
 * Pure.
 */

export type TitleState = 'idle' | 'busy';

/** The glyph claude's title starts with at its prompt. */
const IDLE_GLYPH = '✳';

const TITLE = /\u001b\][02];([^\u0007\u001b]*)(?:\u0007|\u001b\\)/g;

/** The state the last terminal title in `chunk` shows, or null when it sets none. */
export function titleState(chunk: string): TitleState | null {
  let last: string | null = null;
  for (const m of chunk.matchAll(TITLE)) last = m[1]!;
  if (last === null || !last.includes('Claude Code')) return null;
  return last.trimStart().startsWith(IDLE_GLYPH) ? 'idle' : 'busy';
}

/** The person pressed Esc alone (a key sequence such as an arrow also starts with ESC, in one chunk). */
export function isEscKey(data: Buffer | string): boolean {
  return (typeof data === 'string' ? data : data.toString('latin1')) === '\u001b';
}
