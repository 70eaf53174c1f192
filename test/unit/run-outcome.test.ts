import { describe, expect, it } from 'vitest';
import { EMPTY_SUMMARY, type StreamSummary } from '../../src/claude/stream.js';
import type { RunType } from '../../src/ledger/types.js';
import { classify, type ExitInfo, type Outcome, type StopReason } from '../../src/run/end/outcome.js';

type Result = NonNullable<StreamSummary['result']>;

const result = (over: Partial<Result> = {}): Result => ({
  kind: 'result',
  subtype: 'success',
  isError: false,
  result: 'All done.',
  permissionDenials: [],
  ...over,
});
const withResult = (over: Partial<Result> = {}): StreamSummary => ({
  ...EMPTY_SUMMARY,
  result: result(over),
});

const OK_EXIT: ExitInfo = { code: 0, signal: null };
const FINISHED: StopReason = { kind: 'finished' };

interface Case {
  type?: RunType;
  /** null: the run ended at claude's result line, before its exit. */
  exit?: ExitInfo | null;
  summary?: StreamSummary;
  stop?: StopReason;
  hasChanges?: boolean;
  revised?: boolean;
  stderrLine?: string;
}

const run = (c: Case): Outcome =>
  classify({
    type: c.type ?? 'scout',
    exit: c.exit === undefined ? OK_EXIT : c.exit,
    summary: c.summary ?? withResult(),
    stop: c.stop ?? FINISHED,
    hasChanges: c.hasChanges ?? false,
    ...(c.revised ? { revised: true } : {}),
    ...(c.stderrLine === undefined ? {} : { stderrLine: c.stderrLine }),
  });

const crashed = (kind: string, message: string): Outcome =>
  ({ status: 'CRASHED', failure: { kind, message } }) as Outcome;

describe('classify: every branch', () => {
  it.each<[string, Case, Outcome]>([
    [
      'interrupted (Ctrl-C)',
      { stop: { kind: 'interrupted', by: 'SIGINT' }, exit: { code: null, signal: 'SIGTERM' } },
      { status: 'ABORTED', failure: { kind: 'killed', message: 'stopped by SIGINT' } },
    ],
    [
      'aborted by the supervisor',
      { stop: { kind: 'aborted', reason: 'the agent tried to push' }, exit: { code: 143, signal: null } },
      { status: 'ABORTED', failure: { kind: 'agent_abort', message: 'the agent tried to push' } },
    ],
    [
      'timeout',
      { stop: { kind: 'timeout', afterMs: 90_400 }, exit: { code: null, signal: 'SIGTERM' } },
      crashed('timeout', 'still running after 90s'),
    ],
    [
      'claude could not be started',
      { exit: { code: null, signal: null, spawnError: 'spawn claude ENOENT' }, summary: EMPTY_SUMMARY },
      crashed('crashed', 'could not start claude: spawn claude ENOENT'),
    ],
    [
      'api_error by terminalReason, no HTTP status',
      {
        exit: { code: 1, signal: null },
        summary: withResult({
          isError: true,
          terminalReason: 'api_error',
          result: 'Overloaded\nretry later',
        }),
      },
      crashed('api_error', 'the model API failed: Overloaded'),
    ],
    [
      'api_error by terminalReason, with HTTP status',
      {
        exit: { code: 1, signal: null },
        summary: withResult({ isError: true, terminalReason: 'api_error', apiErrorStatus: 529, result: 'x' }),
      },
      crashed('api_error', 'the model API failed (HTTP 529): x'),
    ],
    [
      'api_error by apiErrorStatus on an error result',
      {
        exit: { code: 1, signal: null },
        summary: withResult({
          isError: true,
          subtype: 'error_during_execution',
          apiErrorStatus: 500,
          result: 'boom',
        }),
      },
      crashed('api_error', 'the model API failed (HTTP 500): boom'),
    ],
    [
      'killed by a signal',
      { exit: { code: null, signal: 'SIGKILL' }, summary: EMPTY_SUMMARY },
      crashed('killed', 'claude was killed by SIGKILL'),
    ],
    [
      'non-zero exit without a result',
      { exit: { code: 2, signal: null }, summary: EMPTY_SUMMARY },
      crashed('crashed', 'claude exited with code 2'),
    ],
    [
      'non-zero exit with a result: its first line',
      {
        exit: { code: 1, signal: null },
        summary: withResult({ isError: true, result: '  bad flag\nusage: …' }),
      },
      crashed('crashed', 'claude exited with code 1: bad flag'),
    ],
    [
      // `claude --resume` of a session with no conversation: an empty error result, its reason on
      // stderr only — the message ended at its colon ("claude exited with code 1: "), found by a user's eye.
      'non-zero exit, an empty result: the last line of its stderr',
      {
        exit: { code: 1, signal: null },
        summary: withResult({ isError: true, result: '' }),
        stderrLine: 'No conversation found with session ID: 42e8d3da',
      },
      crashed('crashed', 'claude exited with code 1: No conversation found with session ID: 42e8d3da'),
    ],
    [
      'non-zero exit, an empty result, nothing on stderr: no dangling colon',
      { exit: { code: 1, signal: null }, summary: withResult({ isError: true, result: '' }), stderrLine: '' },
      crashed('crashed', 'claude exited with code 1'),
    ],
    [
      'exit 0 without a result',
      { summary: { ...EMPTY_SUMMARY, lastText: 'half a thought' } },
      crashed('crashed', 'claude exited without a result'),
    ],
    [
      'exit 0 with an error result: tool_error',
      { summary: withResult({ isError: true, subtype: 'error_max_turns', result: 'Reached max turns' }) },
      crashed('tool_error', 'claude ended with an error (error_max_turns): Reached max turns'),
    ],
    ['fix with changes: REVIEW', { type: 'fix', hasChanges: true }, { status: 'REVIEW', failure: null }],
    ['fix without changes: DONE', { type: 'fix', hasChanges: false }, { status: 'DONE', failure: null }],
    [
      'a revision that undid the whole change: REVIEW still (the conversation goes on)',
      { type: 'fix', hasChanges: false, revised: true },
      { status: 'REVIEW', failure: null },
    ],
    ['scout: DONE', { type: 'scout' }, { status: 'DONE', failure: null }],
    ['plan: DONE', { type: 'plan' }, { status: 'DONE', failure: null }],
    [
      'review: DONE even with changes reported',
      { type: 'review', hasChanges: true },
      { status: 'DONE', failure: null },
    ],
    ['ended at its result line: DONE', { type: 'scout', exit: null }, { status: 'DONE', failure: null }],
    [
      'ended at a result line that is an error',
      {
        exit: null,
        summary: withResult({ isError: true, subtype: 'error_max_turns', result: 'Reached max turns' }),
      },
      crashed('tool_error', 'claude ended with an error (error_max_turns): Reached max turns'),
    ],
    [
      'ended at a result line of an API failure',
      {
        exit: null,
        summary: withResult({ isError: true, terminalReason: 'api_error', result: 'Overloaded' }),
      },
      crashed('api_error', 'the model API failed: Overloaded'),
    ],
  ])('%s', (_name, input, expected) => {
    expect(run(input)).toEqual(expected);
  });
});

describe('classify: precedence', () => {
  const badEverything: Case = {
    type: 'fix',
    hasChanges: true,
    exit: { code: 1, signal: 'SIGKILL', spawnError: 'EACCES' },
    summary: withResult({ isError: true, terminalReason: 'api_error', apiErrorStatus: 500 }),
  };

  it.each<[string, Case, Outcome['status'], string]>([
    [
      'an interrupt beats everything else',
      { ...badEverything, stop: { kind: 'interrupted', by: 'SIGTERM' } },
      'ABORTED',
      'killed',
    ],
    [
      'an interrupt beats a non-zero exit',
      { exit: { code: 1, signal: null }, stop: { kind: 'interrupted', by: 'SIGINT' } },
      'ABORTED',
      'killed',
    ],
    [
      'an interrupt beats a clean finish with changes',
      { type: 'fix', hasChanges: true, stop: { kind: 'interrupted', by: 'SIGINT' } },
      'ABORTED',
      'killed',
    ],
    [
      'an abort beats a timeout-like exit',
      { ...badEverything, stop: { kind: 'aborted', reason: 'r' } },
      'ABORTED',
      'agent_abort',
    ],
    [
      'a timeout beats a signal and an API error',
      { ...badEverything, stop: { kind: 'timeout', afterMs: 1000 } },
      'CRASHED',
      'timeout',
    ],
    [
      'a timeout beats a clean exit with a result',
      { stop: { kind: 'timeout', afterMs: 1000 } },
      'CRASHED',
      'timeout',
    ],
    ['a spawn error beats the rest of the exit', badEverything, 'CRASHED', 'crashed'],
    [
      'an API error beats a signal',
      { exit: { code: null, signal: 'SIGTERM' }, summary: withResult({ terminalReason: 'api_error' }) },
      'CRASHED',
      'api_error',
    ],
    [
      'an API error beats a non-zero exit',
      { exit: { code: 1, signal: null }, summary: withResult({ isError: true, apiErrorStatus: 401 }) },
      'CRASHED',
      'api_error',
    ],
    [
      'a signal beats a good result',
      { type: 'fix', hasChanges: true, exit: { code: null, signal: 'SIGTERM' } },
      'CRASHED',
      'killed',
    ],
    [
      'a non-zero exit beats a good result',
      { type: 'fix', hasChanges: true, exit: { code: 3, signal: null } },
      'CRASHED',
      'crashed',
    ],
    [
      'an error result beats changes',
      { type: 'fix', hasChanges: true, summary: withResult({ isError: true, subtype: 'error_max_turns' }) },
      'CRASHED',
      'tool_error',
    ],
  ])('%s', (_name, input, status, kind) => {
    const outcome = run(input);
    expect(outcome.status).toBe(status);
    expect(outcome.failure?.kind).toBe(kind);
  });

  it('an apiErrorStatus on a result that is not an error is no API error', () => {
    expect(run({ summary: withResult({ isError: false, apiErrorStatus: 529 }) })).toEqual({
      status: 'DONE',
      failure: null,
    });
  });

  it('cuts a long first line of the result at 200 characters', () => {
    const outcome = run({
      exit: { code: 1, signal: null },
      summary: withResult({ result: 'x'.repeat(500) }),
    });
    expect(outcome.failure?.message).toBe(`claude exited with code 1: ${'x'.repeat(200)}…`);
  });
});
