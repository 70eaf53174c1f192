import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { setPointer } from '../../src/ledger/index.js';
import { resolveRun } from '../../src/ledger/resolve.js';
import { create, idSequence, ledgerRepo } from './fixtures/ledger.js';

/** Runs whose short ids share prefixes: ab12cd and ab1f00 share "ab1", beef01 looks like a word. */
async function fixture() {
  const { ledger } = ledgerRepo();
  const make = (task: string, at: string, id: string) => create(ledger, task, at, { ids: idSequence(id) });
  const runs = {
    first: await make('first', '2026-11-23T21:00:00Z', 'ab12cd'),
    second: await make('second', '2026-11-23T21:05:00Z', 'ab1f00'),
    coffee: await make('coffee', '2026-11-23T21:10:00Z', 'c0ffee'),
    beef: await make('beef', '2026-11-23T21:15:00Z', 'beef01'),
  };
  return { ledger, runs };
}

function errorOf(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (isAgentboxError(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('resolveRun: a unique prefix of the short id, as git takes a hash prefix', () => {
  type Runs = Awaited<ReturnType<typeof fixture>>['runs'];
  it.each<[string, keyof Runs]>([
    ['ab12cd', 'first'],
    ['ab12', 'first'],
    ['AB12', 'first'],
    ['ab1f', 'second'],
    ['c0f', 'coffee'],
    ['c0ffe', 'coffee'],
    ['bee', 'beef'],
  ])('%s names the %s run', async (ref, expected) => {
    const { ledger, runs } = await fixture();
    expect(resolveRun(ledger, ref)).toBe(runs[expected].name);
  });

  it('an ambiguous prefix lists the candidates with their ids, and what to type next', async () => {
    const { ledger, runs } = await fixture();
    const error = errorOf(() => resolveRun(ledger, 'ab1'));
    expect(error.code).toBe('RUN_AMBIGUOUS');
    expect(error.message).toBe(
      `"ab1" matches 2 runs:\n    ab1f00  ${runs.second.name}\n    ab12cd  ${runs.first.name}`,
    );
    expect(error.hint).toBe('type more of the id, in the same command: e.g. ab1f00 for the first above');
  });

  it.each([
    ['abc', 'RUN_NOT_FOUND', `no run named "abc" in`],
    ['fee', 'RUN_NOT_FOUND', 'no run named "fee"'],
    ['ab12cd0', 'RUN_NOT_FOUND', 'no run named "ab12cd0"'],
  ])('%j matches nothing: %s', async (ref, code, message) => {
    const { ledger } = await fixture();
    const error = errorOf(() => resolveRun(ledger, ref));
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
  });

  it('fewer than 3 characters are not taken as an id, and the error says so', async () => {
    const { ledger } = await fixture();
    const error = errorOf(() => resolveRun(ledger, 'ab'));
    expect(error.code).toBe('RUN_NOT_FOUND');
    expect(error.hint).toBe('a short id needs at least 3 characters — run "agentbox status" to list runs');
  });

  it('a short id wins over a pointer of the same name, so an id agentbox prints always means its run', async () => {
    const { ledger, runs } = await fixture();
    setPointer(ledger, 'beef01', runs.first.name);
    setPointer(ledger, 'bee', runs.first.name);
    expect(resolveRun(ledger, 'beef01')).toBe(runs.beef.name);
    expect(resolveRun(ledger, 'bee')).toBe(runs.beef.name);
    // A pointer no id starts with still works.
    setPointer(ledger, 'fad', runs.coffee.name);
    expect(resolveRun(ledger, 'fad')).toBe(runs.coffee.name);
    expect(errorOf(() => resolveRun(ledger, 'last-fail')).message).toContain('is not set yet');
  });
});
