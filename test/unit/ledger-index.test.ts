import { describe, expect, it } from 'vitest';
import {
  foldIndex,
  LINE_MAX_BYTES,
  makeIndexEvent,
  parseIndexLine,
  serializeIndexEvent,
} from '../../src/ledger/index-log.js';
import { renderIndexMd } from '../../src/ledger/index-md.js';
import { pointerForStatus } from '../../src/ledger/links.js';
import { applyStatePatch, initialState } from '../../src/ledger/state.js';
import type { RunStatus } from '../../src/ledger/types.js';
import { NOW, sampleMeta } from './fixtures/ledger-sample.js';

describe('INDEX.jsonl events', () => {
  const state = initialState(sampleMeta(), NOW, null);

  it('are single lines that parse back, carrying what status --all needs', () => {
    const event = makeIndexEvent(sampleMeta(), state, 'created', undefined, NOW);
    const line = serializeIndexEvent(event);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(parseIndexLine(line)).toEqual(event);
    expect(event).toMatchObject({ started_at: NOW.toISOString(), ended_at: null, failure_kind: null });
  });

  it('stay far below 4 KB with huge, multi-line, escape-heavy task and detail', () => {
    const nasty = `${'"\\\u0001ü🚀\n'.repeat(5000)}`;
    const event = makeIndexEvent(sampleMeta(nasty), state, nasty, nasty, NOW);
    const line = serializeIndexEvent(event);
    expect(Buffer.byteLength(line)).toBeLessThan(LINE_MAX_BYTES);
    expect(line.slice(0, -1)).not.toMatch(/[\n\u0000-\u001f]/);
    expect(event.task.endsWith('…')).toBe(true);
    expect(parseIndexLine(line)?.task).toBe(event.task);
  });

  it.each([
    '',
    'not json',
    '{"v":2,"run":"x"}',
    '[1]',
    '{"v":1,"ts":"t","run":"r","status":"NOPE","type":"fix","task":""}',
  ])('parseIndexLine skips %j', (line) => {
    expect(parseIndexLine(line)).toBeNull();
  });

  it('fold: the last event per run wins, the start time survives', () => {
    const m = sampleMeta();
    const done = applyStatePatch(state, { status: 'DONE' }, new Date('2025-11-22T15:00:00Z'));
    const events = [
      makeIndexEvent(m, state, 'created', undefined, NOW),
      makeIndexEvent({ ...m, run_name: 'other' }, state, 'created', undefined, NOW),
      makeIndexEvent(m, done, 'done', undefined, new Date('2025-11-22T15:00:00Z')),
    ];
    const folded = foldIndex(events);
    expect(folded.size).toBe(2);
    expect(folded.get(m.run_name)?.status).toBe('DONE');
    expect(folded.get(m.run_name)?.started_at).toBe(NOW.toISOString());
  });
});

describe('INDEX.md', () => {
  const event = (run: string, ts: string, task: string, status: RunStatus = 'ACTIVE') =>
    makeIndexEvent(
      { run_name: run, type: 'scout', task },
      { ...initialState(sampleMeta(), new Date(ts), null), status },
      'e',
      undefined,
      new Date(ts),
    );

  it('is a recent-first table with cells that cannot break it', () => {
    const md = renderIndexMd(
      foldIndex([
        event('25-01-01_0000__old__aaaaaa', '2025-01-01T00:00:00Z', 'older'),
        event('25-06-01_0000__new__bbbbbb', '2025-06-01T00:00:00Z', 'a | b <script> \\ c', 'DONE'),
      ]),
    );
    const rows = md.split('\n').filter((l) => l.startsWith('| ['));
    expect(rows).toEqual([
      '| [25-06-01_0000__new__bbbbbb](runs/25-06-01_0000__new__bbbbbb/) | scout | DONE | 2025-06-01 00:00 | a \\| b &lt;script> \\\\ c |',
      '| [25-01-01_0000__old__aaaaaa](runs/25-01-01_0000__old__aaaaaa/) | scout | ACTIVE | 2025-01-01 00:00 | older |',
    ]);
  });

  it('caps the rows and says how many are left out', () => {
    const events = Array.from({ length: 5 }, (_, i) =>
      event(`25-01-0${i + 1}_0000__r__00000${i}`, `2025-01-0${i + 1}T00:00:00Z`, `t${i}`),
    );
    const md = renderIndexMd(foldIndex(events), 3);
    expect(md.split('\n').filter((l) => l.startsWith('| ['))).toHaveLength(3);
    expect(md).toContain('… 2 older runs — `agentbox status --all`');
    expect(md).toContain('25-01-05_0000__r__000004');
    expect(md).not.toContain('25-01-01_0000__r__000000');
  });

  it('says how to start when there are no runs', () => {
    expect(renderIndexMd(new Map())).toContain('No runs yet');
  });
});

describe('pointerForStatus', () => {
  it.each<[RunStatus, string | null]>([
    ['CRASHED', 'last-fail'],
    ['STALLED', 'last-fail'],
    ['ABORTED', 'last-fail'],
    ['DONE', 'last-done'],
    ['REVIEW', 'last-review'],
    ['ACTIVE', null],
    ['MERGED', null],
    ['DISCARDED', null],
  ])('%s → %s', (status, pointer) => {
    expect(pointerForStatus(status)).toBe(pointer);
  });
});
