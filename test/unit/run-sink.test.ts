import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Tally } from '../../src/budget/tally.js';
import { EventLog } from '../../src/ledger/events.js';
import { type Ledger, type RunHandle, readState } from '../../src/ledger/index.js';
import type { Progress } from '../../src/present/live.js';
import { NO_TOOL_ERRORS } from '../../src/present/tool-errors.js';
import { Halt } from '../../src/run/halt.js';
import { RunSink } from '../../src/run/sink.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

// Real output of Claude Code 2.1.330 (regenerate: npx tsx test/fixtures/stream/record.ts).
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/stream');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8');
const linesOf = (text: string) => text.split('\n').filter((l) => l !== '');

const T0 = Date.parse('2026-11-21T14:50:00Z');

/** A sink on a real run in a temp ledger, with a clock the test moves and what it reports kept. */
async function sinkOn(options: { maxCostUsd?: number; failOnDirect?: boolean; worktree?: string } = {}) {
  const { ledger } = ledgerRepo();
  const run = await create(ledger, 'why is login slow?', '2026-11-21T14:49:00Z');
  const log = new EventLog(run.dir);
  const tally = new Tally(null, options.maxCostUsd ?? null, null);
  const halt = new Halt({ log, tally, maxCostUsd: options.maxCostUsd ?? null, root: ledger.root });
  const stops: number[] = [];
  halt.attach(() => stops.push(stops.length));
  const clock = { now: T0 };
  const tools: { name: string; ok: boolean; excerpt: string }[] = [];
  const progress: Progress[] = [];
  const sink = new RunSink({
    ledger,
    runName: run.name,
    runDir: run.dir,
    log,
    tally,
    halt,
    worktree: options.worktree ?? null,
    failOnDirect: options.failOnDirect ?? false,
    toolCalls: 0,
    toolErrors: NO_TOOL_ERRORS,
    startedAt: T0,
    onTool: (name, ok, excerpt) => tools.push({ name, ok, excerpt }),
    onProgress: (p) => progress.push(p),
    now: () => clock.now,
  });
  return { ledger, run, log, halt, sink, stops, clock, tools, progress };
}

const state = (ledger: Ledger, run: RunHandle) => readState(path.join(ledger.runsDir, run.name))!;
const events = (log: EventLog) => log.read().map(({ ts: _ts, ...rest }) => rest);

/** A tool call and its result, as stream-json lines. */
function toolLines(id: string, name: string, input: unknown, result: { text: string; isError: boolean }) {
  return [
    JSON.stringify({
      type: 'assistant',
      message: { id: `msg_${id}`, role: 'assistant', content: [{ type: 'tool_use', id, name, input }] },
    }),
    JSON.stringify({
      type: 'user',
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: result.text, is_error: result.isError }],
      },
    }),
  ];
}

describe('RunSink: a recorded stream, line by line', () => {
  it('writes raw/stream.jsonl, counts the tool call, feeds the supervisor and records the model', async () => {
    const { ledger, run, sink, tools, progress, halt } = await sinkOn();
    let resulted = false;
    void sink.result.then(() => {
      resulted = true;
    });
    const lines = linesOf(fixture('success'));
    for (const line of lines.slice(0, -1)) sink.line(line);
    await Promise.resolve();
    // `result` resolves on the result line (the last), not before.
    expect(resulted).toBe(false);
    sink.line(lines.at(-1)!);
    await sink.result;
    await sink.settled();
    // The clock stood still: only the first line's heartbeat was written (at most one per 2 s).
    expect(state(ledger, run).tool_calls).toBe(0);
    sink.beat(true);
    await sink.settled();

    expect(fs.readFileSync(path.join(run.dir, 'raw', 'stream.jsonl'), 'utf8')).toBe(fixture('success'));
    expect(sink.summary.toolCalls).toBe(1);
    expect(sink.summary.result).toMatchObject({ isError: false });
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ name: 'Bash' });
    expect(state(ledger, run)).toMatchObject({
      claude_version: '2.1.330',
      model_used: 'claude-opus-5-5',
      tool_calls: 1,
      failed_tool_calls: 0,
      last_heartbeat: new Date(T0).toISOString(),
    });
    // One live line per stream line; claude is waiting for the model once the call has ended.
    expect(progress).toHaveLength(linesOf(fixture('success')).length);
    expect(progress.at(-1)).toMatchObject({ tool: null, toolCalls: 1, elapsedMs: 0 });
    expect(halt.reason).toEqual({ kind: 'finished' });
  });

  it('the same stream in arbitrary chunks (split inside lines, the last without a newline) reads the same', async () => {
    const whole = await sinkOn();
    for (const line of linesOf(fixture('success'))) whole.sink.line(line);
    const chunked = await sinkOn();
    const bytes = Buffer.from(fixture('success').trimEnd());
    for (let at = 0; at < bytes.length; at += 97) chunked.sink.stdout(bytes.subarray(at, at + 97));
    chunked.sink.flush();
    await Promise.all([whole.sink.settled(), chunked.sink.settled()]);

    expect(fs.readFileSync(path.join(chunked.run.dir, 'raw', 'stream.jsonl'), 'utf8')).toBe(
      fixture('success'),
    );
    expect(chunked.sink.summary).toEqual(whole.sink.summary);
    expect(chunked.tools).toEqual(whole.tools);
  });

  it('failed tool calls are counted (refusals are not) and the last one is in state.json', async () => {
    const { ledger, run, sink, tools } = await sinkOn();
    for (const line of linesOf(fixture('denied-tool'))) sink.line(line);
    sink.beat(true);
    await sink.settled();

    expect(tools.map((t) => [t.name, t.ok])).toEqual([
      ['Bash', false],
      ['Bash', false],
      ['Write', false],
    ]);
    expect(sink.toolErrors.count).toBeGreaterThan(0);
    expect(sink.toolErrors.count).toBeLessThan(3);
    expect(state(ledger, run)).toMatchObject({
      tool_calls: 3,
      failed_tool_calls: sink.toolErrors.count,
      last_tool_error: sink.toolErrors.last,
    });
  });

  it('a resumed run goes on counting from its state', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2026-11-21T14:49:00Z');
    const log = new EventLog(run.dir);
    const tally = new Tally(null, null, null);
    const sink = new RunSink({
      ledger,
      runName: run.name,
      runDir: run.dir,
      log,
      tally,
      halt: new Halt({ log, tally, maxCostUsd: null, root: ledger.root }),
      worktree: null,
      failOnDirect: false,
      toolCalls: 7,
      toolErrors: { count: 2, last: 'Bash npm test: Error: boom' },
      startedAt: T0,
      onTool: () => {},
    });
    for (const line of linesOf(fixture('success'))) sink.line(line);
    expect(sink.summary.toolCalls).toBe(8);
    expect(sink.toolErrors).toEqual({ count: 2, last: 'Bash npm test: Error: boom' });
    await sink.settled();
  });
});

describe('RunSink: heartbeats', () => {
  it('at most one state write per 2 s from the stream; a forced beat always writes', async () => {
    const { ledger, run, sink, clock } = await sinkOn();
    const [first, second, third] = linesOf(fixture('success'));
    const beatAt = async () => {
      await sink.settled();
      return state(ledger, run).last_heartbeat;
    };

    sink.line(first!);
    expect(await beatAt()).toBe(new Date(T0).toISOString());
    clock.now = T0 + 1_500;
    sink.line(second!);
    expect(await beatAt()).toBe(new Date(T0).toISOString());
    clock.now = T0 + 2_500;
    sink.line(third!);
    expect(await beatAt()).toBe(new Date(T0 + 2_500).toISOString());
    clock.now = T0 + 2_600;
    sink.beat(true);
    expect(await beatAt()).toBe(new Date(T0 + 2_600).toISOString());
  });

  it('no heartbeat from a line after the result line (the run may have ended there)', async () => {
    const { ledger, run, sink, clock } = await sinkOn();
    const lines = linesOf(fixture('success'));
    clock.now = T0 + 10_000;
    for (const line of lines) sink.line(line);
    await sink.settled();
    const beat = state(ledger, run).last_heartbeat;
    expect(beat).toBe(new Date(T0 + 10_000).toISOString());
    clock.now = T0 + 20_000;
    sink.line(lines[0]!);
    await sink.settled();
    expect(state(ledger, run).last_heartbeat).toBe(beat);
  });

  it('beating() beats on a timer until it is stopped', async () => {
    const { ledger, run, sink, clock } = await sinkOn();
    clock.now = T0 + 60_000;
    const stop = sink.beating(20);
    await new Promise((resolve) => setTimeout(resolve, 120));
    stop();
    await sink.settled();
    expect(state(ledger, run).last_heartbeat).toBe(new Date(T0 + 60_000).toISOString());
    clock.now = T0 + 120_000;
    await new Promise((resolve) => setTimeout(resolve, 60));
    await sink.settled();
    expect(state(ledger, run).last_heartbeat).toBe(new Date(T0 + 60_000).toISOString());
  });
});

describe('RunSink: what ends a run', () => {
  it('passing the cost budget stops claude once and logs why', async () => {
    const { sink, halt, stops, log } = await sinkOn({ maxCostUsd: 0.000001 });
    for (const line of linesOf(fixture('success'))) sink.line(line);
    await sink.settled();

    expect(halt.reason).toMatchObject({ kind: 'aborted', failure: 'budget' });
    expect(stops).toHaveLength(1);
    expect(events(log).filter((e) => e.event === 'budget')).toEqual([
      { event: 'budget', decision: 'abort', reason: expect.any(String), max_cost_usd: 0.000001 },
    ]);
  });

  it('a stream file that cannot be written stops the run (io_error) and the rest is not read', async () => {
    const { ledger, run, sink, halt, stops, tools } = await sinkOn();
    fs.rmSync(path.join(run.dir, 'raw'), { recursive: true });
    for (const line of linesOf(fixture('success'))) sink.line(line);
    sink.stderr(Buffer.from('warning\n'));

    expect(halt.reason).toEqual({
      kind: 'io_error',
      message: `cannot write ${path.relative(ledger.root, path.join(run.dir, 'raw', 'stream.jsonl'))} (ENOENT); the run was stopped`,
    });
    expect(stops).toHaveLength(1);
    expect(tools).toEqual([]);
    expect(sink.summary.toolCalls).toBe(0);
  });

  it('stderr goes to raw/stderr.log', async () => {
    const { run, sink } = await sinkOn();
    sink.stderr(Buffer.from('one\n'));
    sink.stderr('two\n');
    expect(fs.readFileSync(path.join(run.dir, 'raw', 'stderr.log'), 'utf8')).toBe('one\ntwo\n');
  });

  it.each([
    [
      true,
      'fail',
      { kind: 'aborted', reason: 'Supervisor violation: direct_execution', failure: 'violation' },
      1,
    ],
    [false, 'refused', { kind: 'finished' }, 0],
  ] as const)(
    'a direct execution with failOnDirect %s is logged (%s)',
    async (failOnDirect, action, reason, stopCount) => {
      const { sink, halt, stops, log } = await sinkOn({ failOnDirect });
      const call = toolLines(
        'toolu_1',
        'Bash',
        { command: 'claude -p "do it for me"' },
        { text: 'ok', isError: false },
      );
      for (const line of call) sink.line(line);
      await sink.settled();

      expect(events(log)).toEqual([
        {
          event: 'violation',
          type: 'direct_execution',
          detail: 'ran Claude Code or a model API itself: claude -p "do it for me"',
          action,
        },
      ]);
      expect(halt.reason).toEqual(reason);
      expect(stops).toHaveLength(stopCount);
    },
  );

  it('an ordinary tool call is no violation', async () => {
    const { sink, halt, log, tools } = await sinkOn({ failOnDirect: true });
    for (const line of toolLines(
      'toolu_2',
      'Bash',
      { command: 'npm test' },
      { text: 'passed', isError: false },
    ))
      sink.line(line);
    await sink.settled();
    expect(events(log)).toEqual([]);
    expect(halt.reason).toEqual({ kind: 'finished' });
    expect(tools).toEqual([{ name: 'Bash', ok: true, excerpt: expect.stringContaining('npm test') }]);
  });
});
