import { describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import { checkMessage, deliveredJson, deliverMessage } from '../../src/gate/inject.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { moreWordsFor } from '../../src/present/next-step.js';
import { processStartTime } from '../../src/process/reap.js';
import { create, errorOf, idSequence, ledgerRepo } from './fixtures/ledger.js';

describe('inject (src/gate/inject.ts)', () => {
  it('refuses an empty message before anything else', () => {
    expect(() => checkMessage(' \n')).toThrow('the message is empty');
    expect(() => checkMessage('go on')).not.toThrow();
  });

  it('refuses a run that is not running, and offers resume with the message', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('aaaaaa') });
    await updateState(ledger, run, { status: 'CRASHED' });
    const text = 'x'.repeat(50);
    const error = (await errorOf(() => deliverMessage(readRun(ledger, run.name), text))) as AgentboxError;
    expect(error).toBeInstanceOf(AgentboxError);
    expect(error.message).toBe(`run ${run.name} is not running (CRASHED): nothing would read the message`);
    expect(error.hint).toBe(
      `continue it with the message instead: agentbox resume aaaaaa "${'x'.repeat(40)}…"`,
    );
  });

  it('names a next step the run allows: a fix run in REVIEW takes a review; an ended one, a new run (it offered resume, which refuses them)', () => {
    expect(moreWordsFor({ status: 'REVIEW', type: 'fix', id: 'abc123' }, 'also docs')).toBe(
      'give it to the run as a review instead: agentbox revise abc123 "also docs"',
    );
    for (const status of ['DONE', 'MERGED', 'DISCARDED', 'FAILED'] as const)
      expect(moreWordsFor({ status, type: 'fix', id: 'abc123' }, 'x')).toBe(
        `it has ended (${status}): start a new run for more work (agentbox fix "…", or its task anew: agentbox rerun abc123)`,
      );
    expect(moreWordsFor({ status: 'REVIEW', type: 'review', id: 'abc123' }, 'x')).toMatch(/^it has ended/);
    expect(moreWordsFor({ status: 'ABORTED', type: 'fix', id: 'abc123' }, 'x')).toBe(
      'continue it with the message instead: agentbox resume abc123 "x"',
    );
  });

  it('a fetched run goes on nowhere here: its task is started anew (it offered revise and resume, which refuse it)', () => {
    for (const status of ['REVIEW', 'ABORTED', 'ACTIVE', 'DONE'] as const)
      expect(moreWordsFor({ status, type: 'fix', id: 'abc123', ranOn: 'ci-7' }, 'x')).toBe(
        'it ran on ci-7, where its session is: start its task anew here with agentbox rerun abc123',
      );
  });

  it("queues for a live run's supervisor, in order, and says how many wait", async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('bbbbbb') });
    await updateState(ledger, run, { pid: process.pid, pid_start: processStartTime(process.pid) });
    const live = readRun(ledger, run.name);
    const first = await deliverMessage(live, 'one');
    const second = await deliverMessage(live, 'two');
    expect(first).toMatchObject({ to: 'supervisor', pending: 1 });
    expect(second).toMatchObject({ to: 'supervisor', pending: 2 });
    if (second.to !== 'supervisor') throw new Error('unreachable');
    expect(deliveredJson(run.name, second)).toEqual({ run: run.name, id: second.id, pending: 2 });
    expect(deliveredJson('s', { to: 'session', reply: { queued: 3 } })).toEqual({ run: 's', queued: 3 });
  });
});
