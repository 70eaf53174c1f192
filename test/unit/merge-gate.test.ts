import { describe, expect, it } from 'vitest';
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
