import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCursor, parseCursor, START } from '../../src/transcript/cursor.js';
import type { Entry } from '../../src/transcript/entry.js';
import { fullEntry } from '../../src/transcript/full.js';
import { LineReader } from '../../src/transcript/lines.js';
import { transcriptEntries, transcriptPage } from '../../src/transcript/read.js';
import { entryJson, entryLine } from '../../src/transcript/render.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/stream');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-transcript-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A run folder with these claude lines and events.jsonl lines. */
function runDir(
  claude: string | readonly object[],
  events: readonly object[] = [],
  file = 'stream.jsonl',
): string {
  const dir = path.join(root, `run-${n++}`);
  fs.mkdirSync(path.join(dir, 'raw'), { recursive: true });
  const text = typeof claude === 'string' ? claude : claude.map((l) => `${JSON.stringify(l)}\n`).join('');
  fs.writeFileSync(path.join(dir, 'raw', file), text);
  fs.writeFileSync(path.join(dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return dir;
}

const all = (dir: string) => [...transcriptEntries(dir)].map((p) => p.entry);
const at = (s: number) => new Date(Date.UTC(2026, 10, 21, 14, 0, s)).toISOString();
const assistant = (s: number, ...content: object[]) => ({
  type: 'assistant',
  timestamp: at(s),
  message: { role: 'assistant', content },
});
const result = (s: number, id: string, content: string, extra: object = {}) => ({
  type: 'user',
  timestamp: at(s),
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, ...extra }] },
});
const call = (id: string, name: string, input: object) => ({ type: 'tool_use', id, name, input });

describe('the transcript of a run', () => {
  it('reads a real stream: each call with its input, its result, the refusal marked, the answer', () => {
    const dir = runDir(fs.readFileSync(path.join(FIXTURES, 'denied-tool.jsonl'), 'utf8'));
    const entries = all(dir);
    expect(entries.map((e) => e.kind)).toEqual([
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'text',
      'result',
    ]);
    expect(entries[0]).toMatchObject({
      tool: 'Bash',
      input: { command: 'touch not-allowed.txt' },
      at: '2026-11-21T14:49:59.861Z',
    });
    expect(entries[1]).toMatchObject({ kind: 'tool_result', is_error: true, refused_by: 'config' });
    expect(entries[3]).toMatchObject({ text: 'Exit code 3', is_error: true });
    expect(entries[3]).not.toHaveProperty('refused_by');
    expect(entryLine(entries[1]!)).toContain('✗ refused (config)');
    expect(entries.at(-1)).toMatchObject({ kind: 'result', text: 'Gave up.', cost_usd: 0.00096 });
  });

  it('cuts a long result, says its whole length, and reads it back whole by its id', () => {
    const long = `${'x'.repeat(5000)}END`;
    const dir = runDir([assistant(1, call('t1', 'Read', { file_path: '/r/a.txt' })), result(2, 't1', long)]);
    const [, res] = all(dir);
    expect(res).toMatchObject({ kind: 'tool_result', cut: { length: 5003, file: 'raw/stream.jsonl' } });
    expect((res as { text: string }).text).toHaveLength(2000);
    const whole = fullEntry(dir, res!.id);
    expect((whole as { text: string }).text).toBe(long);
    expect(whole).not.toHaveProperty('cut');
    expect(() => fullEntry(dir, 'e0')).toThrow(/not an entry of this run's raw\/stream.jsonl/);
    expect(() => fullEntry(dir, 's0.9')).toThrow(/no transcript entry s0.9/);
  });

  it('merges events.jsonl by time: a refusal by the guard, a correction, an injected message, the supervisor, a verification, a violation, the budget', () => {
    const dir = runDir(
      [
        assistant(1, { type: 'text', text: 'Looking.' }, call('t1', 'Bash', { command: 'rm -rf /' })),
        result(3, 't1', 'denied by agentbox', { is_error: true }),
        assistant(5, { type: 'text', text: 'Done.' }),
        assistant(9, { type: 'text', text: 'Now with the template.' }),
      ],
      [
        {
          ts: at(2),
          event: 'PreToolUse',
          source: 'guard',
          tool: 'Bash',
          decision: 'deny',
          reason: 'rm outside the worktree',
        },
        { ts: at(4), event: 'PostToolUse', tool: 'Bash', ok: false },
        { ts: at(6), event: 'verify', ok: false, detail: 'npm test failed' },
        {
          ts: at(6),
          event: 'violation',
          type: 'verify_failed',
          detail: 'npm test failed',
          action: 'correct',
        },
        {
          ts: at(7),
          event: 'Stop',
          decision: 'continue',
          source: 'rules',
          reason: 'correction',
          text: 'Run the tests.',
        },
        {
          ts: at(8),
          event: 'Stop',
          decision: 'inject',
          source: 'inbox',
          messages: ['m1'],
          text: 'Also fix the README.',
        },
        { ts: at(10), event: 'Stop', decision: 'complete', source: 'claude', reason: 'looks done' },
        { ts: at(11), event: 'budget', decision: 'abort', reason: 'spent $2.01 of $2.00' },
        {
          ts: at(12),
          event: 'refused',
          source: 'claude',
          toolUseId: 't1',
          tool: 'Bash',
          reason: 'copy of the stream',
        },
        {
          ts: at(13),
          event: 'refused',
          source: 'sandbox',
          rule: 'read-fence',
          toolUseId: 't1',
          tool: 'Bash',
          reason: 'the sandbox hid /home/me/.ssh/id_rsa',
        },
        {
          ts: at(14),
          event: 'refused',
          source: 'sandbox',
          rule: 'network',
          toolUseId: 't1',
          tool: 'Bash',
          reason: "the run's proxy refused evil.example:80",
        },
      ],
    );
    const kinds = all(dir).map((e) => (e.kind === 'text' ? `text:${e.text}` : e.kind));
    expect(kinds).toEqual([
      'text:Looking.',
      'tool_call',
      'refusal',
      'tool_result',
      'text:Done.',
      'verify',
      'violation',
      'correction',
      'inject',
      'text:Now with the template.',
      'decision',
      'budget',
      // A hidden read and a refused host, seen beside the call (its result says nothing of them).
      'refusal',
      'refusal',
    ]);
    const lines = all(dir).map((e) => entryLine(e));
    expect(lines).toContain('14:00:13  ✗ refused (sandbox) Bash: the sandbox hid /home/me/.ssh/id_rsa');
    expect(lines).toContain('14:00:02  ✗ refused (guard) Bash: rm outside the worktree');
    expect(lines).toContain('14:00:07  ↻ correction (rules, correction): Run the tests.');
    expect(lines).toContain('14:00:08  ✉ injected: Also fix the README.');
    expect(lines).toContain('14:00:10  ◆ supervisor: complete (claude) looks done');
  });

  it("shows the agent's text safe for a terminal: escapes removed, controls and bidi shown, unicode kept", () => {
    const text = 'café ✓ 日本 🙂\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202eevil\nnext line\x07';
    const dir = runDir([assistant(1, { type: 'text', text })]);
    const [entry] = all(dir);
    expect((entry as { text: string }).text).toBe(text);
    const line = entryLine(entry!);
    expect(line).toBe('14:00:01  café ✓ 日本 🙂\\u202eevil next line\\x07');
    expect(line).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
    // As JSON too: every control escaped, the same text after parsing (an 8-bit CSI included).
    const c1 = { ...entry!, text: `${text}\x9b2J\u2066` } as Entry;
    const json = entryJson(c1);
    expect(json).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(json)).toEqual(c1);
  });

  it('pages by cursor through entries of one line and both files, each page following the one before', () => {
    const dir = runDir(
      [
        assistant(
          1,
          { type: 'text', text: 'a' },
          call('t1', 'Read', { file_path: '/x' }),
          call('t2', 'Grep', { pattern: 'y' }),
        ),
        result(2, 't1', 'one'),
        result(3, 't2', 'two'),
        { type: 'result', result: 'ok', is_error: false },
      ],
      [
        { ts: at(2), event: 'session', detail: 'x' },
        { ts: at(4), event: 'ended', status: 'DONE' },
      ],
    );
    const whole = all(dir).map((e) => e.id);
    expect(whole).toHaveLength(8);
    for (const limit of [1, 2, 3, 5]) {
      const ids: string[] = [];
      let cursor = START;
      for (let i = 0; i < 20; i++) {
        const page = transcriptPage(dir, parseCursor(formatCursor(cursor)), limit);
        ids.push(...page.entries.map((e) => e.id));
        cursor = page.next;
        if (!page.more) break;
      }
      expect(ids).toEqual(whole);
    }
  });

  it('leaves a last line still being written for the next read, and reads it once it is whole', () => {
    const line = JSON.stringify(assistant(2, { type: 'text', text: 'second' }));
    const dir = runDir(
      `${JSON.stringify(assistant(1, { type: 'text', text: 'first' }))}\n${line.slice(0, 30)}`,
    );
    const first = transcriptPage(dir, START, 10);
    expect(first.entries.map((e) => (e as { text: string }).text)).toEqual(['first']);
    fs.appendFileSync(path.join(dir, 'raw', 'stream.jsonl'), `${line.slice(30)}\n`);
    const second = transcriptPage(dir, first.next, 10);
    expect(second.entries.map((e) => (e as { text: string }).text)).toEqual(['second']);
    expect(transcriptPage(dir, second.next, 10).entries).toEqual([]);
  });

  it("reads an interactive session's copied transcript: the person's prompts, Stop hook feedback, calls", () => {
    const dir = runDir(
      [
        { type: 'summary', summary: 'x', leafUuid: 'u' },
        { type: 'user', timestamp: at(1), message: { role: 'user', content: 'fix the bug' } },
        assistant(2, call('t1', 'Edit', { file_path: '/r/a.ts', old_string: 'a', new_string: 'b' })),
        result(3, 't1', 'edited'),
        {
          type: 'user',
          timestamp: at(4),
          message: { role: 'user', content: [{ type: 'text', text: 'Stop hook feedback:\nRun the tests.' }] },
        },
      ],
      [],
      'transcript.jsonl',
    );
    const entries = all(dir);
    expect(entries.map((e) => e.kind)).toEqual(['user', 'tool_call', 'tool_result', 'user']);
    expect(entries[0]).toMatchObject({ text: 'fix the bug', id: expect.stringMatching(/^t\d+\.0$/) });
    expect(entryLine(entries[1]!)).toBe('14:00:02  → Edit /r/a.ts');
  });

  it('names a line too long to hold instead of reading it, and goes on', () => {
    const file = path.join(root, 'long.jsonl');
    fs.writeFileSync(file, `${'y'.repeat(300_000)}\n{"a":1}\n`);
    const reader = new LineReader(file, 0, 100_000);
    expect(reader.next()).toEqual({ offset: 0, bytes: 300_001, text: null });
    expect(reader.next()).toEqual({ offset: 300_001, bytes: 8, text: '{"a":1}' });
    expect(reader.next()).toBeNull();
    reader.close();
  });

  it('decodes a character split across two chunks whole', () => {
    const file = path.join(root, 'split.jsonl');
    const pad = 'z'.repeat(64 * 1024 - 1);
    fs.writeFileSync(file, `${pad}é日\n`);
    const reader = new LineReader(file, 0);
    expect(reader.next()?.text).toBe(`${pad}é日`);
    reader.close();
  });

  it.each(['x', '1-2', '-1-0-0', '1-0-0-', '1.0.0', '1-0-0-1-1', `${'9'.repeat(16)}-0-0`])(
    'refuses the cursor %j',
    (c) => {
      expect(() => parseCursor(c)).toThrow(/not a transcript cursor/);
    },
  );

  it("reads a running session's live file from Claude Code's folder, with the ids its copy will have; a link there is not followed", () => {
    const dir = runDir([]);
    fs.rmSync(path.join(dir, 'raw', 'stream.jsonl'));
    const live = path.join(root, `live-${n}.jsonl`);
    fs.writeFileSync(
      live,
      `${JSON.stringify({ type: 'user', timestamp: at(1), message: { role: 'user', content: 'go' } })}\n`,
    );
    const page = transcriptPage(dir, START, 5, live);
    expect(page.entries).toEqual([{ kind: 'user', text: 'go', id: 't0.0', at: at(1) }]);
    const link = path.join(root, `link-${n}.jsonl`);
    fs.symlinkSync(live, link);
    expect(transcriptPage(dir, START, 5, link).entries).toEqual([]);
    // Once copied, the copy is read, and the same ids name the same entries.
    fs.copyFileSync(live, path.join(dir, 'raw', 'transcript.jsonl'));
    expect(transcriptPage(dir, START, 5, null).entries).toEqual(page.entries);
  });

  it('reads a run with no files yet as empty', () => {
    const dir = path.join(root, 'empty');
    fs.mkdirSync(dir);
    expect(transcriptPage(dir, START, 5)).toEqual({ entries: [], next: START, more: false });
    expect(all(dir) satisfies Entry[]).toEqual([]);
  });
});
