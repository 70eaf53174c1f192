import { describe, expect, it } from 'vitest';
import { conflictHint } from '../../src/gate/merge-conflict.js';
import { gateOf, notPassing, notPassingLine } from '../../src/gate/merge-gate.js';
import type { RunDetails } from '../../src/ledger/index.js';

const run = (state: Record<string, unknown> | null, type = 'fix'): RunDetails =>
  ({ name: 'r', dir: '/nowhere', files: [], meta: { type }, state }) as unknown as RunDetails;
const verify = (ok: boolean, detail = '`sh check.sh` failed (exit code 1)') => ({
  event: 'verify',
  ok,
  detail,
});

describe('the merge gate', () => {
  it.each([
    ['REVIEW, no checks', { status: 'REVIEW' }, [], null],
    ['REVIEW, verify passed', { status: 'REVIEW', output: { verified: true } }, [verify(true)], null],
    [
      'REVIEW, but runs.verify failed (state)',
      { status: 'REVIEW', output: { verified: false } },
      [verify(false)],
      'it ended REVIEW but its checks failed — runs.verify FAILED: `sh check.sh` failed (exit code 1)',
    ],
    [
      'no output recorded: the last verify event decides',
      { status: 'REVIEW' },
      [verify(true), verify(false, 'x is not 42')],
      'it ended REVIEW but its checks failed — runs.verify FAILED: x is not 42',
    ],
    [
      "the command's output: its end follows the first line, no dangling colon",
      { status: 'REVIEW', output: { verified: false } },
      [
        verify(
          false,
          '`npm test` failed (exit code 1):\n> jest\n\nPASS a.test.js\nFAIL b.test.js\n  expected 3, got 2\n',
        ),
      ],
      'it ended REVIEW but its checks failed — runs.verify FAILED: `npm test` failed (exit code 1): PASS a.test.js ⏎ FAIL b.test.js ⏎ expected 3, got 2',
    ],
    [
      'a long output is cut from its front',
      { status: 'REVIEW', output: { verified: false } },
      [verify(false, `\`sh check.sh\` failed (exit code 1):\n${'x'.repeat(300)} the end`)],
      `it ended REVIEW but its checks failed — runs.verify FAILED: \`sh check.sh\` failed (exit code 1): …${'x'.repeat(115)} the end`,
    ],
    ['DONE: a fix run that changed nothing, nothing failed', { status: 'DONE' }, [], null],
    [
      'DONE after a failed setup still says so',
      { status: 'DONE', failure: { kind: 'setup', message: 'npm ci failed' } },
      [],
      'it ended DONE — setup: npm ci failed',
    ],
    ['a later pass clears an earlier failure', { status: 'REVIEW' }, [verify(false), verify(true)], null],
    [
      'ABORTED with its failure',
      { status: 'ABORTED', failure: { kind: 'killed', message: 'stopped by agentbox stop' } },
      [],
      'it ended ABORTED — killed: stopped by agentbox stop',
    ],
    ['CRASHED, no failure recorded', { status: 'CRASHED' }, [], 'it ended CRASHED'],
    [
      'runs.setup failed',
      { status: 'FAILED', setup: { ok: false, command: 'npm ci' } },
      [],
      'it ended FAILED — runs.setup FAILED: npm ci',
    ],
    [
      "the agent's text is made safe, one line",
      { status: 'ABORTED', failure: { kind: 'agent_abort', message: 'gave up\x1b]0;t\x07\nsecond line' } },
      [],
      'it ended ABORTED — agent_abort: gave up',
    ],
  ])('%s', (_, state, events, expected) => {
    const np = notPassing(run(state), events);
    expect(np === null ? null : notPassingLine(np)).toBe(expected);
  });

  it('asks only of a fix run still waiting for the gate', () => {
    expect(gateOf(run({ status: 'ABORTED' }), [])?.status).toBe('ABORTED');
    for (const status of ['ACTIVE', 'MERGED', 'DISCARDED'])
      expect(gateOf(run({ status }), []), status).toBeNull();
    expect(gateOf(run({ status: 'ABORTED' }, 'scout'), [])).toBeNull();
    expect(gateOf(run(null), [])).toBeNull();
  });
});

describe("a conflict's hint", () => {
  it.each([
    [[], 'Those files changed here since the run started: merge by hand (git apply --3way p.patch'],
    [['a.js'], 'then git stash pop; or merge by hand (git apply --3way p.patch'],
  ])('edited %j: one clause after the colon, no dangling "or"', (edited, expected) => {
    const hint = conflictHint('abc123', 'p.patch', edited);
    expect(hint).toContain(expected);
    expect(hint).not.toMatch(/: or /);
  });
});
