import { type LineComment, placeText, type Review } from './comments.js';
import { type FileHunks, type Hunk, hunkAt, numbered } from './hunks.js';

/*
 * `{{review}}` of the revise template: the person's review as the agent gets it — their message
 * verbatim, then each line comment with its file, its line and the hunk of the change it is on
 * (the line marked). The form is part of the prompt contract: tests pin it. Pure.
 */

/** At most this many lines of a hunk around the commented line: a long hunk is cut around it. */
const CONTEXT = 20;

export function renderReview(review: Review, files: readonly FileHunks[]): string {
  const parts: string[] = [];
  if (review.message) parts.push(review.message);
  if (review.comments.length > 0) {
    parts.push('## Line comments');
    review.comments.forEach((c, i) => {
      const hunk = hunkAt(files, c.file, c.line, c.side);
      parts.push(
        `### ${i + 1}. ${placeText(c)}${c.side === 'old' ? ` (line ${c.line} before your change: a line it removed)` : ''}`,
        c.text,
        hunk
          ? `The hunk of your change it is on (the line marked with ←):\n${fenced(hunkLines(hunk, c))}`
          : `(${c.side === 'old' ? 'removed line' : 'line'} ${c.line} of ${c.file} is not in your change)`,
      );
    });
  }
  return parts.join('\n\n');
}

/** The hunk's header and lines, the commented one marked, cut to CONTEXT lines either side. */
function hunkLines(hunk: Hunk, c: LineComment): string[] {
  const rows = numbered(hunk);
  const at = Math.max(
    0,
    rows.findIndex((r) =>
      c.side === 'old' ? r.old === c.line && r.text.startsWith('-') : r.line === c.line,
    ),
  );
  const from = Math.max(0, at - CONTEXT);
  const to = Math.min(rows.length, at + CONTEXT + 1);
  return [
    hunk.header,
    ...(from > 0 ? ['…'] : []),
    ...rows.slice(from, to).map((r, i) => (from + i === at ? `${r.text}  ←` : r.text)),
    ...(to < rows.length ? ['…'] : []),
  ];
}

/** A ```diff block whose fence is longer than any run of backticks inside it. */
function fenced(lines: readonly string[]): string {
  const longest = Math.max(
    2,
    ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((m) => m.length))),
  );
  const fence = '`'.repeat(longest + 1);
  return [`${fence}diff`, ...lines, fence].join('\n');
}
