import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/context.js';
import { liveReporter, type StepReport, stepLine, stepText } from '../../src/present/live.js';

/** Issue 29 §3: runs.setup and runs.verify say when they start and end, piped or on a terminal. */
describe('steps of agentbox’s own in a run (src/present/live.ts)', () => {
  const end = (over: Partial<NonNullable<StepReport['end']>> = {}) => ({
    end: { ok: false, exitCode: 1, timedOut: false, durationMs: 7_000, ...over },
  });
  it.each<[string, StepReport, string]>([
    ['setup starts', { step: 'setup', command: 'npm ci', elapsedMs: 400 }, '[400ms] setup started: npm ci'],
    [
      'setup passes',
      {
        step: 'setup',
        command: 'npm ci',
        elapsedMs: 92_400,
        ...end({ ok: true, exitCode: 0, durationMs: 92_000 }),
      },
      '[1m 32s] setup passed after 1m 32s: npm ci',
    ],
    [
      'verify fails',
      { step: 'verify', command: 'npm test', elapsedMs: 107_000, ...end() },
      '[1m 47s] verify FAILED (exit code 1) after 7s: npm test',
    ],
    [
      'verify times out',
      { step: 'verify', command: 'npm test', elapsedMs: 70_000, ...end({ exitCode: null, timedOut: true }) },
      '[1m 10s] verify FAILED (timed out) after 7s: npm test',
    ],
    [
      'setup is stopped',
      { step: 'setup', command: 'npm ci', elapsedMs: 9_000, ...end({ exitCode: null, stopped: true }) },
      '[9s] setup FAILED (stopped) after 7s: npm ci',
    ],
    [
      'a command that never ran',
      { step: 'setup', command: 'npm ci', elapsedMs: 1_000, ...end({ exitCode: null, durationMs: 3 }) },
      '[1s] setup FAILED (killed, or could not start) after 3ms: npm ci',
    ],
    [
      'a long, multi-line command with a control character: one short, clean line',
      { step: 'setup', command: `npm ci\u001b[2J &&\n  ${'x'.repeat(80)}`, elapsedMs: 0 },
      `[0ms] setup started: npm ci && ${'x'.repeat(49)}…`,
    ],
  ])('%s', (_name, report, expected) => {
    expect(stepLine(report)).toBe(expected);
    expect(stepText(report)).toBe(expected.replace(/^\[[^\]]+\] /, ''));
  });

  it('piped: a line when each step starts and ends, between the tool calls, never a carriage return', () => {
    const io = memoryIo({ isTTY: false });
    const live = liveReporter(io);
    live.update({ step: 'setup', command: 'npm ci', elapsedMs: 100 });
    live.update({ step: 'setup', command: 'npm ci', elapsedMs: 5_000, ...end({ ok: true, exitCode: 0 }) });
    live.update({ tool: 'Bash', target: 'npx ava', toolCalls: 1, elapsedMs: 8_000 });
    live.update({ step: 'verify', command: 'npm test', elapsedMs: 9_000 });
    live.update({ step: 'verify', command: 'npm test', elapsedMs: 16_000, ...end() });
    live.clear();
    expect(io.stdout).toBe(
      [
        '[100ms] setup started: npm ci',
        '[5s] setup passed after 7s: npm ci',
        '[8s] Bash npx ava',
        '[9s] verify started: npm test',
        '[16s] verify FAILED (exit code 1) after 7s: npm test',
        '',
      ].join('\n'),
    );
  });

  it('on a terminal: the live line shows the step while it runs; its end stays in the scrollback', () => {
    const io = memoryIo({ isTTY: true });
    const live = liveReporter(io, 60_000);
    live.update({ tool: 'Bash', target: 'npx ava', toolCalls: 3, elapsedMs: 8_000 });
    live.update({ step: 'verify', command: 'npm test', elapsedMs: 9_000 });
    expect(io.stdout.split('\r\u001b[2K').at(-1)).toMatch(/^. verify npm test · \d+ms · 3 tool calls · 9s$/);
    live.update({ step: 'verify', command: 'npm test', elapsedMs: 16_000, ...end() });
    live.clear();
    expect(io.stdout).toContain('\r\u001b[2K[16s] verify FAILED (exit code 1) after 7s: npm test\n');
    // After it, claude is waiting for the model again, with its count of tool calls kept.
    expect(io.stdout.split('\r\u001b[2K').at(-2)).toMatch(
      /^. waiting for the model · \d+ms · 3 tool calls · 16s$/,
    );
  });
});
