/**
 * Commit messages agentbox writes: the run's result on its branch, and a merge's commit. Pure.
 */

/** A task's first line, cut to 72 characters, as a commit subject. */
export function subjectOf(task: string): string {
  // NOTE: cut by code points, not UTF-16 units: slicing through an emoji left half a surrogate
  // pair, which reaches git as U+FFFD. `\r?\n` and the trim keep a CRLF task's `\r` out of it.
  const first = [...(task.trim().split(/\r?\n/)[0] ?? '').trim()];
  return first.length > 72 ? `${first.slice(0, 71).join('')}…` : first.join('');
}

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
  const answer = (input.answer ?? '').trim();
  const cut = [...answer];
  const excerpt = cut.length > ANSWER_CHARS ? `${cut.slice(0, ANSWER_CHARS - 1).join('')}…` : answer;
  return [
    subjectOf(input.task) || `agentbox run ${input.name}`,
    '',
    ...(excerpt ? [excerpt, ''] : []),
    'Task:',
    input.task.trim(),
    '',
    `Agentbox-Run: ${input.name}`,
    `Agentbox-Status: ${input.status}`,
    '',
  ].join('\n');
}

/** The commit `agentbox merge --commit` makes in the main tree. */
export function mergeMessage(name: string, task: string): string {
  return `${subjectOf(task)}\n\nMerged from agentbox run ${name}.\n\nTask:\n${task.trim()}\n`;
}
