import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/ledger/events.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { endHead } from '../../src/present/print.js';
import { NO_TOOL_ERRORS } from '../../src/present/tool-errors.js';
import { followRun, inOrder, type RunSighting, streamLineTime, timeOf } from '../../src/present/watch.js';
import { cli, create, idSequence, ledgerRepo } from './fixtures/ledger.js';

async function sightings(iterable: AsyncIterable<RunSighting>): Promise<RunSighting[]> {
  const out: RunSighting[] = [];
  for await (const seen of iterable) out.push(seen);
  return out;
}

const toolUse = (name: string, input: object, timestamp?: string) =>
  JSON.stringify({
    type: 'assistant',
    message: { content: [{ type: 'tool_use', id: 't', name, input }] },
    ...(timestamp ? { timestamp } : {}),
  });
/** One line of events.jsonl at a fixed time. */
const at = (ts: string, entry: Record<string, unknown>) => `${JSON.stringify({ ts, ...entry })}\n`;

describe('followRun (src/present/watch.ts)', () => {
  it('a finished run: its tool calls, its events, then how it ended, as data', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('aaaaaa') });
    fs.writeFileSync(
      path.join(run.dir, 'raw', 'stream.jsonl'),
      `${toolUse('Read', { file_path: 'src/a.ts' })}\nnot json\n${toolUse('Bash', {})}\n`,
    );
    new EventLog(run.dir).append({ event: 'stop_requested', by: 'agentbox stop' });
    await updateState(ledger, run, {
      status: 'ABORTED',
      failure: { kind: 'killed', message: 'stopped by agentbox stop' },
    });
    const seen = await sightings(followRun(readRun(ledger, run.name), 1));
    expect(seen.filter((s) => s.kind === 'tool')).toEqual([
      { kind: 'tool', name: 'Read', target: 'src/a.ts', at: expect.any(Number) },
      { kind: 'tool', name: 'Bash', target: null, at: expect.any(Number) },
    ]);
    expect(seen.filter((s) => s.kind === 'event').map((s) => s.kind === 'event' && s.event.event)).toContain(
      'stop_requested',
    );
    expect(seen.at(-1)).toEqual({
      kind: 'ended',
      status: 'ABORTED',
      failure: { kind: 'killed', message: 'stopped by agentbox stop' },
      toolErrors: NO_TOOL_ERRORS,
    });
    // The command prints the same run, ending with its exit code.
    const watched = await cli(repo.dir, ['watch', 'aaaaaa']);
    expect(watched.code).toBe(1);
    expect(watched.stdout).toMatch(/\] Read src\/a\.ts\n.*\] Bash\n/s);
    expect(watched.stdout).toContain('] stop requested (agentbox stop)\n');
    expect(watched.stdout).toContain('✗ ');
  });

  it('a finished run replays each line at its own time since the start, in order (the trial: a tool call after verify)', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'make ava pass', '2026-01-01T09:00:00Z', { ids: idSequence('cccccc') });
    // Claude Code stamps each stream line; agentbox stamps each event. A run of 1m 47s.
    fs.writeFileSync(
      path.join(run.dir, 'raw', 'stream.jsonl'),
      [
        '{"type":"system","subtype":"init","session_id":"s"}',
        toolUse('Read', { file_path: 'index.js' }, '2026-01-01T09:00:35.000Z'),
        toolUse('Bash', { command: 'npx ava' }, '2026-01-01T09:01:10.400Z'),
        // A line without its own time stays after the one before it.
        toolUse('Bash', { command: 'npx xo' }),
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(run.dir, 'events.jsonl'),
      at('2026-01-01T09:00:00.600Z', { event: 'setup_started', command: 'npm ci' }) +
        at('2026-01-01T09:00:31.000Z', {
          event: 'setup_finished',
          command: 'npm ci',
          ok: true,
          exit_code: 0,
          timed_out: false,
          duration_ms: 30_400,
        }) +
        at('2026-01-01T09:01:00.000Z', {
          event: 'verify',
          ok: false,
          detail: '`npm test` failed (exit code 1)',
        }) +
        at('2026-01-01T09:01:47.000Z', { event: 'verify', ok: true, detail: '`npm test` passed' }) +
        // Found in the stream at the run's end and logged then, with when it happened.
        at('2026-01-01T09:01:47.100Z', {
          event: 'refused',
          source: 'sandbox',
          tool: 'Bash',
          rule: 'sandbox',
          reason: 'deny network-outbound registry.npmjs.org:443',
          at: '2026-01-01T09:01:12.000Z',
        }),
    );
    await updateState(ledger, run, { status: 'REVIEW', ended_at: '2026-01-01T09:01:47.200Z' });
    const watched = await cli(repo.dir, ['watch', 'cccccc']);
    expect(watched.code).toBe(0);
    expect(watched.stdout.split('\n').slice(1, 9)).toEqual([
      '[600ms] setup started: npm ci',
      '[31s] setup passed after 30s: npm ci',
      '[35s] Read index.js',
      '[1m] verify: FAILED — `npm test` failed (exit code 1)',
      '[1m 10s] Bash npx ava',
      '[1m 10s] Bash npx xo',
      '[1m 12s] refused: Bash by sandbox — deny network-outbound registry.npmjs.org:443',
      '[1m 47s] verify: passed — `npm test` passed',
    ]);
  });

  it.each<[string, unknown, number | null]>([
    ['an ISO time', '2026-01-01T09:00:35.000Z', Date.UTC(2026, 0, 1, 9, 0, 35)],
    ['not a time', 'soon', null],
    ['not a string', 1767258035000, null],
    ['absent', undefined, null],
  ])('timeOf: %s', (_name, value, expected) => {
    expect(timeOf(value)).toBe(expected);
  });

  it.each<[string, string, number | null]>([
    ['a stamped line', toolUse('Bash', {}, '2026-01-01T09:00:35.000Z'), Date.UTC(2026, 0, 1, 9, 0, 35)],
    ['an unstamped line', toolUse('Bash', {}), null],
    ['not JSON', 'not json', null],
    ['JSON but no object', '"2026-01-01T09:00:35.000Z"', null],
  ])('streamLineTime: %s', (_name, line, expected) => {
    expect(streamLineTime(line)).toBe(expected);
  });

  it('inOrder: oldest first; a tie keeps the order read', () => {
    const tool = (name: string, t: number) => ({ kind: 'tool' as const, name, target: null, at: t });
    const event = (name: string, t: number) => ({ kind: 'event' as const, event: { event: name }, at: t });
    const read = [
      tool('Read', 35),
      tool('Bash', 70),
      tool('Edit', 70),
      event('verify', 60),
      event('Stop', 70),
    ];
    expect(inOrder(read).map((s) => (s.kind === 'tool' ? s.name : s.event.event))).toEqual([
      'Read',
      'verify',
      'Bash',
      'Edit',
      'Stop',
    ]);
  });

  it.each([
    ['DONE', null, NO_TOOL_ERRORS, '✓ r — DONE'],
    [
      'DONE',
      null,
      { count: 1, last: 'Bash sleep 30: Blocked: standalone sleep 30' },
      '⚠ r — DONE · 1 tool call failed (last: Bash sleep 30: Blocked: standalone sleep 30)',
    ],
    [
      'REVIEW',
      null,
      { count: 2, last: 'Bash x\ny: e' },
      '⚠ r — REVIEW · 2 tool calls failed (last: Bash x\\ny: e)',
    ],
    [
      'CRASHED',
      { kind: 'crashed', message: 'x' },
      { count: 1, last: 'Bash y: z' },
      '✗ r — CRASHED (crashed): x · 1 tool call failed (last: Bash y: z)',
    ],
  ] as const)('endHead: %s, %o, %o', (status, failure, toolErrors, line) => {
    const plain = (t: string) => t;
    const s = { ok: plain, warn: plain, bad: plain, dim: plain, bold: plain, cyan: plain };
    expect(endHead(s, { name: 'r', status, failure, toolErrors })).toBe(line);
  });

  it('a finished run with a failed tool call ends under a warning that says so, as in the foreground', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('dddddd') });
    const last = 'Bash sleep 30: Blocked: standalone sleep 30 wastes time';
    await updateState(ledger, run, { status: 'DONE', failed_tool_calls: 1, last_tool_error: last });
    const seen = await sightings(followRun(readRun(ledger, run.name), 1));
    expect(seen.at(-1)).toEqual({
      kind: 'ended',
      status: 'DONE',
      failure: null,
      toolErrors: { count: 1, last },
    });
    const watched = await cli(repo.dir, ['watch', 'dddddd']);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain(`⚠ ${run.name} — DONE · 1 tool call failed (last: ${last}) · exit 0\n`);
    expect(watched.stdout).not.toContain('✓');
    // --transcript ends the same way.
    const transcript = await cli(repo.dir, ['watch', 'dddddd', '--transcript']);
    expect(transcript.stdout).toContain(
      `⚠ ${run.name} — DONE · 1 tool call failed (last: ${last}) · exit 0\n`,
    );
  });

  it('a run whose process is gone without recording an end: "gone"', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('bbbbbb') });
    // A pid that was alive a moment ago and is not now.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await updateState(ledger, run, { pid: Number(dead.stdout.toString()), pid_start: null });
    expect(await sightings(followRun(readRun(ledger, run.name), 1))).toEqual([{ kind: 'gone' }]);
  });
});
