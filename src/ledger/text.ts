import { withoutSequences } from '../util/terminal-text.js';

/** Task text as the ledger's listings store it: one line, at most TASK_MAX characters. */
export const TASK_MAX = 200;

/**
 * On one line, no control characters (they would break a table, a JSON line or the terminal); an
 * escape sequence goes whole (only its ESC and BEL made spaces left `]0;title` in `status`'s task
 * column, which `show` removes whole).
 */
export function oneLine(text: string): string {
  return withoutSequences(text)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .trim();
}

/** At most `max` code points, with `…` marking a cut. Never splits a surrogate pair. */
export function shorten(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

export function shortTask(task: string): string {
  return shorten(oneLine(task), TASK_MAX);
}
