import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventsWithOffsets, type OffsetEvent, opensAt } from '../../src/web/opens-at.js';

/** Events at made-up offsets 0, 100, 200…: the entry id is `e<offset>`. */
const at = (...values: Record<string, unknown>[]): OffsetEvent[] =>
  values.map((value, i) => ({ offset: i * 100, value }));
const failure = (kind: string, message = 'why') => ({ kind, message });

describe('where a run page opens (error first)', () => {
  it.each([
    ['still running', { status: 'ACTIVE', failure: null }, at({ event: 'verify', ok: false }), false, null],
    ['ended well', { status: 'REVIEW', failure: null }, at({ event: 'verify', ok: true }), false, null],
    [
      'runs.verify failed: its entry',
      { status: 'REVIEW', failure: null },
      at({ event: 'start' }, { event: 'verify', ok: false, detail: 'FAIL' }),
      true,
      { entry: 'e100', why: 'runs.verify failed' },
    ],
    [
      'a verify that failed, then passed: not a failure',
      { status: 'REVIEW', failure: null },
      at({ event: 'verify', ok: false }, { event: 'verify', ok: true }),
      false,
      null,
    ],
    [
      'a violation ended it: the violation',
      { status: 'ABORTED', failure: failure('violation', 'wrote outside') },
      at({ event: 'violation', type: 'a' }, { decision: 'abort' }, { event: 'violation', type: 'b' }),
      true,
      { entry: 'e200', why: 'violation: wrote outside' },
    ],
    [
      'the budget ended it: the budget line',
      { status: 'ABORTED', failure: failure('budget', 'over $1') },
      at({ event: 'budget', reason: 'over $1' }, { event: 'end' }),
      true,
      { entry: 'e0', why: 'budget: over $1' },
    ],
    [
      'the supervisor aborted: its decision',
      { status: 'ABORTED', failure: failure('agent_abort', 'looping') },
      at({ decision: 'continue' }, { decision: 'abort', reason: 'looping' }),
      true,
      { entry: 'e100', why: 'agent_abort: looping' },
    ],
    [
      'a crash: the failure panel',
      { status: 'CRASHED', failure: failure('crashed', 'exit 139') },
      at({ event: 'start' }),
      true,
      { panel: 'failure', why: 'crashed: exit 139' },
    ],
    [
      'aborted, no abort line: the failure panel',
      { status: 'ABORTED', failure: failure('agent_abort', 'x') },
      [],
      true,
      { panel: 'failure', why: 'agent_abort: x' },
    ],
    [
      'did not pass for another reason: the panel that says why',
      { status: 'REVIEW', failure: null },
      [],
      true,
      { panel: 'not-passing', why: 'the run did not pass' },
    ],
  ] as const)('%s', (_name, state, events, notPassing, expected) => {
    expect(opensAt(state as never, events, notPassing)).toEqual(expected);
  });

  it('names an events.jsonl line by its byte offset, as the transcript does; broken lines left out', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opens-at-'));
    try {
      const lines = ['{"event":"start","task":"é"}', 'not json', '[1]', '{"event":"verify","ok":false}'];
      fs.writeFileSync(path.join(dir, 'events.jsonl'), `${lines.join('\n')}\n{"torn`);
      const offset = Buffer.byteLength(`${lines.slice(0, 3).join('\n')}\n`);
      expect(eventsWithOffsets(dir)).toEqual([
        { offset: 0, value: { event: 'start', task: 'é' } },
        { offset, value: { event: 'verify', ok: false } },
      ]);
      expect(eventsWithOffsets(path.join(dir, 'none'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});
