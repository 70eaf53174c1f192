import { AgentboxError } from '../../errors.js';
import type { LineComment, Review } from './comments.js';

/*
 * The review file `agentbox revise <run> --edit` opens in $EDITOR, as `git commit` and `gh pr
 * review` do: the overall feedback on top, then the run's whole change, and a comment on a line
 * is written right under that line, its lines starting with `>`. Lines starting with `#` are
 * ignored; a review left empty aborts. A diff line never starts with `>` or `#` (its content lines
 * start with ' ', '+' or '-'), so a comment is never mistaken for the change, nor the reverse. Pure.
 */

const SEPARATOR = '# ------------------------ >8 ------------------------';

/** The file the editor opens: instructions, the message so far, the change. */
export function writeReviewFile(input: {
  run: string;
  revision: number;
  message: string;
  patch: string;
}): string {
  return [
    input.message.trim(),
    '',
    `# agentbox revise ${input.run} — revision ${input.revision}`,
    '# Write your feedback above. To comment a line of the change, add a line starting',
    "# with '>' right under it (several '>' lines make one comment). Lines starting",
    "# with '#' are ignored. Leave everything empty to abort: nothing is sent.",
    SEPARATOR,
    input.patch.trimEnd(),
    '',
  ].join('\n');
}

/**
 * A review file kept from an attempt that sent nothing (the editor failed, a comment had no line
 * under it), as `fresh` would open it for the same revision: the kept text when it is about the
 * same change (its heading and its change, the `>` comments aside, are the fresh file's), with
 * `message` (typed on the command line this time) first when the kept text lacks it; null when it
 * is about another change. Pure.
 */
export function reopenedReview(kept: string, fresh: string, message: string): string | null {
  const about = (text: string) => {
    const at = text.indexOf('\n# agentbox revise ');
    if (at < 0) return null;
    return text
      .slice(at + 1)
      .split('\n')
      .filter((line) => !line.startsWith('>'))
      .join('\n')
      .trimEnd();
  };
  const same = about(kept);
  if (same === null || same !== about(fresh)) return null;
  const typed = message.trim();
  return typed === '' || kept.includes(typed) ? kept : `${typed}\n\n${kept}`;
}

/** Where a comment in the file sits: its file and line in the change, or why it cannot. */
type Anchor = { file: string; line: number; side?: 'old' } | { problem: string };

/** Where the reading is in the change: the file, the next line on each side, and the anchor. */
interface At {
  readonly current: string;
  readonly next: number;
  readonly before: number;
  readonly anchor: Anchor;
}

/**
 * The review a person wrote into the file. Throws a usage error for a comment with no line under
 * it, and for text typed into the change itself (`patch`, as the file was opened with it): never
 * sent, so never dropped without a word. A file an editor saved with CRLF line ends reads as LF.
 */
export function parseReviewFile(text: string, file: string, patch?: string): Review {
  const lines = text.split('\n').map(withoutCr);
  const typedIntoChange = patch === undefined ? null : changeEdited(lines, patch);
  if (typedIntoChange !== null) throw editedChange(file, typedIntoChange);
  const message: string[] = [];
  const comments: LineComment[] = [];
  let inDiff = false;
  let at: At = { current: '', next: 0, before: 0, anchor: { problem: 'it is above the change' } };
  let open: { file: string; line: number; side?: 'old'; text: string[] } | null = null;
  const close = () => {
    const body = open?.text.join('\n').trim();
    if (open && body) comments.push({ ...open, text: body });
    open = null;
  };
  lines.forEach((line, i) => {
    if (line.startsWith('>')) {
      if ('problem' in at.anchor) throw misplaced(file, i + 1, at.anchor.problem);
      if (!open) open = { ...at.anchor, text: [] };
      open.text.push(line.slice(1).replace(/^ /, ''));
      return;
    }
    if (line.startsWith('#')) return;
    close();
    if (!inDiff && !line.startsWith('diff --git ')) {
      message.push(line);
      return;
    }
    inDiff = true;
    at = step(line, at);
  });
  close();
  return { message: message.join('\n').trim(), comments };
}

/** One line of the change: the file and line a comment under it refers to (a removed line: its old number). */
function step(line: string, { current, next, before }: At): At {
  const header = { problem: 'it is under a header of the change, not under one of its lines' };
  if (line.startsWith('diff --git ')) {
    const at = line.indexOf(' b/');
    return { current: at >= 0 ? line.slice(at + 3) : current, next: 0, before: 0, anchor: header };
  }
  if (line.startsWith('+++ b/')) return { current: line.slice(6), next, before, anchor: header };
  const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
  if (hunk) {
    // (a comment right under a hunk's @@ line is under no line of the change: it was sent as the
    // hunk's first line)
    const [old, now] = [Number(hunk[1]), Number(hunk[2])];
    return {
      current,
      next: now,
      before: old,
      anchor: { problem: "it is under a hunk's @@ line, not under one of its lines" },
    };
  }
  if (next > 0 && line.startsWith('+'))
    return { current, next: next + 1, before, anchor: { file: current, line: next } };
  if (next > 0 && line.startsWith(' '))
    return { current, next: next + 1, before: before + 1, anchor: { file: current, line: next } };
  if (before > 0 && line.startsWith('-'))
    return { current, next, before: before + 1, anchor: { file: current, line: before, side: 'old' } };
  return { current, next, before, anchor: header };
}
const withoutCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * The 1-based line of the file where the change, as opened, was edited (text typed into it, a line
 * changed or removed), or null. The `>` comments and `#` lines aside, the file from its first
 * `diff --git` on must be `patch`. Pure.
 */
function changeEdited(lines: readonly string[], patch: string): number | null {
  const expected = patch.trimEnd().split('\n').map(withoutCr);
  const start = lines.findIndex((line) => line.startsWith('diff --git '));
  if (start < 0) return null;
  let k = 0;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('>') || line.startsWith('#')) continue;
    if (k < expected.length && line === expected[k]) {
      k++;
      continue;
    }
    // (the editor's trailing empty lines are no edit)
    if (k >= expected.length && line.trim() === '') continue;
    return i + 1;
  }
  return null;
}

function editedChange(file: string, line: number): AgentboxError {
  return new AgentboxError(
    'USAGE',
    `${file}:${line}: the change was edited here, and text in the change is not sent: nothing was sent`,
    {
      hint: `write your feedback above the change, and a comment right under the line it is about, starting with '>'; your file is kept (the next --edit opens the change afresh and moves yours to ${file}.old)`,
    },
  );
}

function misplaced(file: string, line: number, problem: string): AgentboxError {
  return new AgentboxError(
    'USAGE',
    `${file}:${line}: a '>' comment must be right under a line of the change; ${problem}`,
    {
      hint: 'move it under the line it is about, or start it with # to drop it, then run the same command again',
    },
  );
}
