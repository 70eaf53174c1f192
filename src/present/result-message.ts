import { terminalText } from '../util/terminal-text.js';

/**
 * Commit messages agentbox writes: the run's result on its branch, and a merge's commit. Pure.
 * The task and the agent's answer in them are text agentbox did not write (a task can come from
 * the page or a fetched run), and `git log` prints a message byte for byte (with --no-pager, a
 * pager that passes bytes through, a CI log): they go in as the one sanitiser renders prose
 * (src/util/terminal-text.ts), escape sequences removed, other controls shown escaped. report.md
 * and meta.yaml keep them as written.
 */

/** git's convention for a subject line (`git log --oneline`, a pull request's title). */
const SUBJECT_MAX = 72;
/** A cut at a word boundary keeps at least this much of the line; else it is cut at the limit. */
const SUBJECT_MIN_WORDS = 36;

/** The characters of a text as a person counts them: an emoji or a letter with its accent is one. */
function graphemes(text: string): string[] {
  return Array.from(
    new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text),
    (s) => s.segment,
  );
}

/**
 * A task's first line as a commit subject, git's way: the whole line when it fits in 72 characters;
 * else cut at its last space within them (a word ending at the 72nd stays whole), with no ellipsis
 * — the whole task is in the body — and without a dangling `,;:`. A line with no space past its
 * 36th character within reach (a URL, a run of CJK) is cut at 72. Characters are graphemes, so an
 * emoji or an accented letter is never cut in half (half a surrogate pair reaches git as U+FFFD).
 */
export function subjectOf(task: string): string {
  // `\r?\n` and the trim keep a CRLF task's `\r` out of it.
  const first = (task.trim().split(/\r?\n/)[0] ?? '').trim();
  // NOTE: a line holds no more graphemes than UTF-16 units: a short one needs no segmenter (its
  // first use in a process costs ~9 ms of ICU's start, on the way out of every fix run and revision).
  if (first.length <= SUBJECT_MAX) return first;
  const chars = graphemes(first);
  if (chars.length <= SUBJECT_MAX) return first;
  let space = SUBJECT_MAX;
  while (space > SUBJECT_MIN_WORDS && !/^\s$/.test(chars[space]!)) space--;
  if (space <= SUBJECT_MIN_WORDS) return chars.slice(0, SUBJECT_MAX).join('');
  return chars
    .slice(0, space)
    .join('')
    .replace(/[\s,;:]+$/, '');
}

/** The task as a commit body carries it: whole, trimmed, with plain newlines. */
const taskBody = (task: string): string => terminalText(task.replace(/\r\n?/g, '\n')).trim();

/** How much of the agent's answer the result commit carries (the rest is in report.md). */
const ANSWER_CHARS = 2000;

/**
 * The result commit on `agentbox/<run>`: the task as subject, the agent's answer (its start), the
 * whole task, and trailers naming the run, so `git log` tells what each commit is.
 */
export function resultMessage(input: {
  readonly name: string;
  readonly task: string;
  readonly status: string;
  readonly answer: string | null;
}): string {
  const answer = terminalText(input.answer ?? '').trim();
  const cut = [...answer];
  const excerpt = cut.length > ANSWER_CHARS ? `${cut.slice(0, ANSWER_CHARS - 1).join('')}…` : answer;
  return [
    subjectOf(terminalText(input.task)) || `agentbox run ${input.name}`,
    '',
    ...(excerpt ? [excerpt, ''] : []),
    'Task:',
    taskBody(input.task),
    '',
    `Agentbox-Run: ${input.name}`,
    `Agentbox-Status: ${input.status}`,
    '',
  ].join('\n');
}

/**
 * The commit `agentbox merge --commit` makes in the main tree: the task's first line as subject
 * (see subjectOf), a blank line, the run it came from, the whole task, and the run as a trailer.
 */
export function mergeMessage(name: string, task: string): string {
  return [
    subjectOf(terminalText(task)) || `agentbox run ${name}`,
    '',
    `Merged from agentbox run ${name}.`,
    '',
    'Task:',
    taskBody(task),
    '',
    `Agentbox-Run: ${name}`,
    '',
  ].join('\n');
}
