import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/transcript/entry.js';
import { entryPrinter } from '../../src/transcript/render.js';
import { READ_LINES } from '../../src/transcript/render-read.js';
import { lineEntries } from '../../src/transcript/stream-entries.js';
import { REPO_ROOT } from '../helpers/bin.js';

/*
 * Issue 38 item 11: a Read result in `show --transcript` and `watch --transcript` is the file's
 * lines, numbers in a column, at most READ_LINES of them and how many more — not one line of
 * `1 line 1 2 line 2 …` cut at 2,000 characters. The stream is a real one: Claude Code 2.1.330
 * reading a 60-line file (its result is `<n>\t<line>` per line, and a last `61\t`).
 */

const STREAM = fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/stream/read.jsonl'), 'utf8');

/** The entries of the recorded stream, its texts cut at `max` characters. */
function entries(max?: number): Entry[] {
  let offset = 0;
  const out: Entry[] = [];
  for (const text of STREAM.split('\n').filter(Boolean)) {
    const ref = { file: 'raw/stream.jsonl', offset, bytes: Buffer.byteLength(text) + 1 };
    out.push(...lineEntries({ text, ref, prefix: 's', lastAt: null, ...(max ? { max } : {}) }).entries);
    offset += ref.bytes;
  }
  return out;
}

const printed = (list: Entry[], width?: number) => list.map(entryPrinter(width)).join('\n').split('\n');

describe('a Read result in the transcript', () => {
  it('prints the file’s lines with their numbers in a column, the first 20, then how many more', () => {
    const lines = printed(entries());
    expect(lines[0]).toMatch(/^12:40:34 {2}→ Read \/tmp\/agentbox-repo-\w+\/src\/app\.js$/);
    expect(lines[1]).toBe('12:40:34    ← 61 lines');
    expect(lines[2]).toBe(`${' '.repeat(14)} 1  line 1  x`);
    expect(lines[10]).toBe(`${' '.repeat(14)} 9  line 9  x`);
    expect(lines[11]).toBe(`${' '.repeat(14)}10  line 10 x`);
    expect(lines[1 + READ_LINES]).toBe(`${' '.repeat(14)}20  line 20 x`);
    expect(lines[2 + READ_LINES]).toBe(`${' '.repeat(14)}… 41 more lines`);
    expect(lines).toHaveLength(3 + READ_LINES);
  });

  it('a result cut at 2,000 characters says how many lines the whole file had', () => {
    // Cut at 200 characters: 16 whole lines and a piece of the 17th, which is left out.
    const lines = printed(entries(200));
    expect(lines[1]).toBe('12:40:34    ← 61 lines');
    expect(lines.slice(2, -1)).toHaveLength(16);
    expect(lines.at(-2)).toBe(`${' '.repeat(14)}16  line 16 x`);
    expect(lines.at(-1)).toBe(`${' '.repeat(14)}… 45 more lines`);
  });

  it('each line fits the terminal and is made safe for it; other results stay one line', () => {
    const [call, result] = entries() as [Entry, Extract<Entry, { kind: 'tool_result' }>];
    const hostile = `1\tok\n2\t\u001b]52;c;ZXZpbA==\u0007paste \u001b[2Jclear \u202eevil\r\n3\t${'x'.repeat(300)}\n4\t`;
    const lines = printed([call, { ...result, text: hostile }], 80);
    expect(lines[1]).toBe('12:40:34    ← 4 lines');
    expect(lines[3]).toBe(`${' '.repeat(14)}2  paste clear \\u202eevil`);
    expect(lines[4]).toHaveLength(80);
    expect(lines.join('\n')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    // A result in the same form from another tool (Bash's `cat -n`), a Read's error: one line each.
    const bash = { ...call, tool: 'Bash', input: { command: 'cat -n f' } } as Entry;
    expect(printed([bash, result])[1]).toMatch(/^12:40:34 {4}← 1 line 1 x 2 line 2 x 3 /);
    const error = { ...result, is_error: true, text: 'File does not exist.' };
    expect(printed([call, error])[1]).toBe('12:40:34    ← error File does not exist.');
  });
});
