import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { transcriptEntries } from '../../src/transcript/read.js';
import { entryWords, rawFilter, searchPattern, searchTranscript } from '../../src/transcript/search.js';

/*
 * Issue 40, search in a transcript: the server answers the ids of the matching entries in the
 * transcript's order. Lines that cannot match are not parsed; what it answers must be what a full
 * read of every entry, filtered, answers — order included, an untimed `result` line after skipped
 * lines merged with events.jsonl where a full read puts it.
 */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-search-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
const lines: unknown[] = [{ type: 'system', subtype: 'init', session_id: 'x' }];
for (let k = 0; k < 30; k++) {
  const id = `toolu_${k}`;
  lines.push(
    {
      type: 'assistant',
      timestamp: at(k * 10),
      message: {
        content: [
          { type: 'text', text: `Step ${k}: look at "quoted" things` },
          { type: 'tool_use', id, name: 'Bash', input: { command: `cat src/File-${k}.ts` } },
        ],
      },
    },
    {
      type: 'user',
      timestamp: at(k * 10 + 5),
      message: { content: [{ type: 'tool_result', tool_use_id: id, content: `line ${k}\nNeedle ${k % 7}` }] },
    },
  );
}
// claude's end: no timestamp of its own; it takes the last line's.
lines.push({ type: 'result', result: 'All done: needle 3 fixed', total_cost_usd: 0.01, is_error: false });
fs.mkdirSync(path.join(dir, 'raw'));
fs.writeFileSync(
  path.join(dir, 'raw', 'stream.jsonl'),
  `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
);
fs.writeFileSync(
  path.join(dir, 'events.jsonl'),
  [
    {
      ts: at(42),
      event: 'Stop',
      iteration: 1,
      decision: 'continue',
      source: 'rules',
      reason: 'r',
      text: 'needle more',
    },
    // After the last "needle 3" result (245 s), before the untimed result line (it takes 295 s).
    { ts: at(270), event: 'merged', detail: 'needle 3' },
    // After the result line.
    { ts: at(296), event: 'verify', ok: true, detail: '`npm test` passed: needle 3', duration_ms: 1200 },
  ]
    .map((e) => `${JSON.stringify(e)}\n`)
    .join(''),
);

/** What a search must answer: every entry read, each tested. */
function everyMatch(query: string): string[] {
  const pattern = searchPattern(query);
  return [...transcriptEntries(dir)]
    .filter(({ entry }) => entryWords(entry).some((w) => pattern.test(w)))
    .map(({ entry }) => entry.id);
}

describe('search in a transcript', () => {
  it.each([
    ['needle', 'in results, a correction, verify and the untimed result line'],
    ['NEEDLE 3', 'any case'],
    ['file-2', 'in a tool input'],
    ['"quoted"', 'a character JSON escapes: every line parsed'],
    ['a.b', 'a regex character is a literal'],
    ['nothing like it', 'no match'],
  ])('%s (%s): what a full read finds, in its order', (query) => {
    const found = searchTranscript(dir, query);
    expect(found.matches).toEqual(everyMatch(query));
    expect(found.capped).toBe(false);
  });

  it('puts an untimed line after skipped ones where a full read does: after the event before it, before the one after', () => {
    const found = searchTranscript(dir, 'needle 3').matches;
    expect(found.slice(-3)).toEqual([
      expect.stringMatching(/^e\d+$/),
      expect.stringMatching(/^s\d+\.0$/),
      expect.stringMatching(/^e\d+$/),
    ]);
  });

  it('skips a line only when the query, as JSON writes it, is not in it', () => {
    expect(rawFilter(searchPattern('a"b'), 'a"b')).toBeUndefined();
    expect(rawFilter(searchPattern('a\\b'), 'a\\b')).toBeUndefined();
    expect(rawFilter(searchPattern('a\tb'), 'a\tb')).toBeUndefined();
    const keep = rawFilter(searchPattern('Needle'), 'Needle')!;
    expect(keep('{"text":"a needle"}')).toBe(true);
    expect(keep('{"text":"a neddle"}')).toBe(false);
  });
});
