import { describe, expect, it } from 'vitest';
import { Tally } from '../../src/budget/tally.js';
import { EventLog } from '../../src/ledger/events.js';
import { Halt } from '../../src/run/halt.js';
import { scratchDir } from './fixtures/ledger.js';

function halted() {
  const dir = scratchDir();
  const log = new EventLog(dir);
  const halt = new Halt({ log, tally: new Tally(null, null, null), maxCostUsd: null, root: dir });
  const stops: string[] = [];
  halt.attach(() => stops.push(halt.reason.kind));
  return { halt, stops, log };
}

describe('Halt: why a run ends, decided once', () => {
  it('the first reason wins and stops claude; later ones change nothing', () => {
    const { halt, stops } = halted();
    halt.halt({ kind: 'aborted', reason: 'budget passed', failure: 'budget' });
    halt.halt({ kind: 'io_error', message: 'disk full' });
    expect(halt.reason).toEqual({ kind: 'aborted', reason: 'budget passed', failure: 'budget' });
    expect(stops).toEqual(['aborted']);
  });

  it('the supervisor’s abort is recorded without stopping claude (it ends on the supervisor’s answer)', () => {
    const { halt, stops } = halted();
    halt.supervisorEnded({ kind: 'complete', summary: 'done' });
    expect(halt.reason).toEqual({ kind: 'finished' });
    halt.supervisorEnded({ kind: 'abort', failure: 'supervisor', reason: 'the same call 3 times' });
    expect(halt.reason).toEqual({ kind: 'aborted', reason: 'the same call 3 times', failure: 'supervisor' });
    expect(stops).toEqual([]);
  });

  it('the timeout has the last word, and stops claude', () => {
    const { halt, stops } = halted();
    halt.supervisorEnded({ kind: 'abort', failure: 'supervisor', reason: 'stuck' });
    halt.timedOut(90_000);
    expect(halt.reason).toEqual({ kind: 'timeout', afterMs: 90_000 });
    expect(stops).toEqual(['timeout']);
  });

  it('Ctrl-C stops claude even when the run was already ending, and keeps the first reason', () => {
    const { halt, stops } = halted();
    halt.interrupted('SIGINT');
    expect(halt.reason).toEqual({ kind: 'interrupted', by: 'SIGINT' });
    halt.interrupted('SIGTERM');
    expect(halt.reason).toEqual({ kind: 'interrupted', by: 'SIGINT' });
    expect(stops).toEqual(['interrupted', 'interrupted']);
  });

  it('before claude runs there is nothing to stop, and the reason still holds', () => {
    const dir = scratchDir();
    const halt = new Halt({
      log: new EventLog(dir),
      tally: new Tally(null, null, null),
      maxCostUsd: null,
      root: dir,
    });
    halt.ioFailed(Object.assign(new Error('no space'), { code: 'ENOSPC' }), `${dir}/state.json`);
    expect(halt.reason).toEqual({
      kind: 'io_error',
      message: 'cannot write state.json (ENOSPC); the run was stopped',
    });
  });

  it('no budget, or one not passed: checkBudget does nothing', () => {
    const { halt, stops, log } = halted();
    halt.checkBudget();
    expect(halt.reason).toEqual({ kind: 'finished' });
    expect(stops).toEqual([]);
    expect(log.read()).toEqual([]);
  });
});
