import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/ledger/events.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { NO_TOOL_ERRORS } from '../../src/present/tool-errors.js';
import { followTranscript, type TranscriptSighting } from '../../src/transcript/follow.js';
import { create, idSequence, ledgerRepo } from './fixtures/ledger.js';

const line = (s: number, content: object[]) =>
  `${JSON.stringify({ type: 'assistant', timestamp: new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString(), message: { content } })}\n`;

describe('followTranscript (src/transcript/follow.ts)', () => {
  it('yields entries as an ACTIVE run writes them, a cut line once it is whole, then its end', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('bbbbbb') });
    await updateState(ledger, run, { status: 'ACTIVE', pid: process.pid, pid_start: null });
    const stream = path.join(run.dir, 'raw', 'stream.jsonl');
    fs.writeFileSync(stream, line(1, [{ type: 'text', text: 'one' }]));
    const seen: TranscriptSighting[] = [];
    const follower = followTranscript(readRun(ledger, run.name), {}, 5);
    const next = async () => {
      const r = await follower.next();
      seen.push(r.value as TranscriptSighting);
      return r.value as TranscriptSighting;
    };
    expect(await next()).toMatchObject({ kind: 'entry', entry: { kind: 'text', text: 'one' } });
    // A writer mid-line: nothing until the line is whole.
    const second = line(2, [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }]);
    fs.appendFileSync(stream, second.slice(0, 20));
    const pending = next();
    await new Promise((r) => setTimeout(r, 50));
    fs.appendFileSync(stream, second.slice(20));
    expect(await pending).toMatchObject({ kind: 'entry', entry: { kind: 'tool_call', tool: 'Bash' } });
    new EventLog(run.dir).append({
      event: 'Stop',
      decision: 'inject',
      source: 'inbox',
      text: 'and the docs',
    });
    expect(await next()).toMatchObject({ kind: 'entry', entry: { kind: 'inject', text: 'and the docs' } });
    await updateState(ledger, run, { status: 'DONE' });
    expect(await next()).toEqual({
      kind: 'ended',
      status: 'DONE',
      failure: null,
      toolErrors: NO_TOOL_ERRORS,
    });
    expect((await follower.next()).done).toBe(true);
    expect(seen.filter((s) => s.kind === 'entry')).toHaveLength(3);
  });
});
