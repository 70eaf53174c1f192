import { terminalLine } from '../util/terminal-text.js';
import type { Entry } from './entry.js';

/**
 * How many of a file's lines a Read result shows: enough to see what was read, few enough that a
 * run reading 40 files still reads as a transcript. The whole text is in `--json` and the web UI.
 */
export const READ_LINES = 20;

/** Where a Read result's lines start: under the result's `←` (the time column, then 4). */
const INDENT = ' '.repeat(14);

type ToolResult = Extract<Entry, { kind: 'tool_result' }>;

/**
 * A Read result's text, Claude Code's `<number>\t<line>` for each line of the file (measured,
 * 2.1.330), as number and line; null when it is not in that form (an error, an image, a note).
 * The last line of a cut text is left out: it is cut short. Pure.
 */
export function readLines(text: string, cut: boolean): { n: string; line: string }[] | null {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (cut) lines.pop();
  const out: { n: string; line: string }[] = [];
  for (const line of lines) {
    const m = /^(\d+)\t/.exec(line);
    if (!m) return null;
    out.push({ n: m[1]!, line: line.slice(m[0].length) });
  }
  return out.length > 0 ? out : null;
}

/** Tabs to spaces at every 8th column, as `cat -n | expand` shows a file. Pure. */
function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const c of line) out += c === '\t' ? ' '.repeat(8 - (out.length % 8)) : c;
  return out;
}

/**
 * A Read result as the file's lines, numbers in a column (as `cat -n` or Claude Code shows them),
 * at most READ_LINES of them and how many more; each line cut to `width` columns and made safe
 * for a terminal (src/util/terminal-text.ts). Null when the text is not a file's lines. Pure.
 */
export function readBlock(
  e: ToolResult,
  time: string,
  width: number,
  m: { readonly dim: (s: string) => string },
): string | null {
  const lines = readLines(e.text, e.cut !== undefined);
  if (lines === null) return null;
  const total = e.cut ? e.cut.lines : lines.length;
  const shown = lines.slice(0, READ_LINES);
  const digits = Math.max(...shown.map((l) => l.n.length));
  const room = Math.max(20, width - INDENT.length - digits - 2);
  const clip = (s: string) => (s.length > room ? `${s.slice(0, room - 1)}…` : s);
  const out = [`${m.dim(time)}    ${m.dim('←')} ${total} line${total === 1 ? '' : 's'}`];
  for (const { n, line } of shown)
    out.push(`${INDENT}${m.dim(n.padStart(digits))}  ${clip(terminalLine(expandTabs(line)))}`.trimEnd());
  const more = total - shown.length;
  if (more > 0) out.push(`${INDENT}${m.dim(`… ${more} more line${more === 1 ? '' : 's'}`)}`);
  return out.join('\n');
}
