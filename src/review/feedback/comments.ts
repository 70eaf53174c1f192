import path from 'node:path';
import { AgentboxError } from '../../errors.js';

/**
 * A person's comment on one line of a run's change: a line of the file as the change leaves it,
 * or (`side: 'old'`) a line the change removed, by its number before the change — the `-` and
 * `+` sides of a hunk header, as `--comment <file>:-<line>` and `<file>:<line>` name them.
 */
export interface LineComment {
  /** The file's path in the repository, as the diff names it (`b/` side). */
  readonly file: string;
  /** 1-based, in the file as the change leaves it (or, `side: 'old'`, as it was before). */
  readonly line: number;
  /** Absent for the new side, so a review of new-side comments reads as before. */
  readonly side?: 'old';
  readonly text: string;
}

/** How a comment's place is written: `src/app.ts:12`, `src/app.ts:-12` for a removed line. Pure. */
export const placeText = (c: { file: string; line: number; side?: 'old' }): string =>
  `${c.file}:${c.side === 'old' ? '-' : ''}${c.line}`;

/** What a person sends with `agentbox revise`: a message, line comments, or both. */
export interface Review {
  readonly message: string;
  readonly comments: readonly LineComment[];
}

const usage = (message: string, hint: string) => new AgentboxError('USAGE', message, { hint });
const EXAMPLE =
  'e.g. --comment src/app.ts:12 "rename x to count" (src/app.ts:-12: line 12 before the change, a removed one)';

/**
 * `--comment <file>:<line> "<text>"`, repeatable, as commander hands it over: every value in
 * order (place, text, place, text…). The place splits at its last `:` (a path may hold one). Bad
 * input is a usage error naming the value. Pure.
 */
export function parseCommentArgs(values: readonly string[]): LineComment[] {
  if (values.length % 2 !== 0) {
    throw usage(
      `--comment takes a place and a text; "${values.at(-1)}" has no ${values.length === 1 ? 'text' : 'pair'}`,
      `${EXAMPLE} (put the overall feedback before the comments)`,
    );
  }
  const comments: LineComment[] = [];
  for (let i = 0; i < values.length; i += 2) {
    const place = values[i]!;
    const text = values[i + 1]!.trim();
    comments.push({ ...parsePlace(place), text: checkText(text, place) });
  }
  return comments;
}

/** `<file>:<line>` (or `:+<line>`, the same) and `<file>:-<line>` (the old side) → its parts. Pure. */
export function parsePlace(place: string): { file: string; line: number; side?: 'old' } {
  const at = place.lastIndexOf(':');
  const file = at > 0 ? place.slice(0, at).replace(/^\.\//, '') : '';
  const number = /^([-+]?)(\d+)$/.exec(place.slice(at + 1));
  const line = Number(number?.[2]);
  if (at <= 0 || file === '' || !number || line < 1) {
    throw usage(`--comment "${place}": not <file>:<line> (a line number from 1)`, EXAMPLE);
  }
  // (`sub/../f.txt` is f.txt: named as the change names it; a path that leaves the repository is not)
  const normal = path.posix.normalize(file);
  if (file.startsWith('/') || normal === '..' || normal.startsWith('../') || normal === '.') {
    throw usage(`--comment "${place}": the file must be a path inside the repository`, EXAMPLE);
  }
  return number[1] === '-' ? { file: normal, line, side: 'old' } : { file: normal, line };
}

function checkText(text: string, place: string): string {
  if (text === '') throw usage(`--comment ${place}: the comment is empty`, EXAMPLE);
  if (text.includes('\0')) throw usage(`--comment ${place}: the comment contains a NUL byte`, 'remove it');
  return text;
}
