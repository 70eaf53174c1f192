import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/web/http.js';
import { assertStartable, startProblems } from '../../src/web/start-check.js';

describe('the new-run form: every bad field, not the first', () => {
  it.each([
    [{ type: 'fix', task: 'x' }, []],
    [{ type: 'fix', task: 'x', timeout: '45m', max_cost: '2.50', supervisor: 'off' }, []],
    [{ type: 'fix', task: ' ', timeout: 'soon', max_cost: 'lots' }, ['task', 'timeout', 'max_cost']],
    [{ type: 'fix', task: 'x', supervisor: 'maybe', max_iterations: '0' }, ['supervisor', 'max_iterations']],
    [{ type: 'scout', task: 'x', attempts: '3', timeout: '-1s' }, ['timeout', 'attempts']],
  ])('%j → %j', (body, fields) => {
    expect(startProblems(body).map((p) => p.field)).toEqual(fields);
  });

  it('one 400 names them all, each with what to write', () => {
    const error = (() => {
      try {
        assertStartable({ type: 'fix', task: 'x', timeout: 'soon', max_cost: 'lots' });
      } catch (e) {
        return e as HttpError;
      }
      throw new Error('no error');
    })();
    expect(error).toBeInstanceOf(HttpError);
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      [
        '2 fields need a fix:',
        'timeout: invalid timeout "soon" — use a duration such as 90s, 30m or 2h',
        'max_cost: invalid --max-cost "lots": expected an amount in USD — use a positive number of dollars, e.g. --max-cost 2.50',
      ].join('\n'),
    );
    expect((error.extra.fields as { field: string }[]).map((f) => f.field)).toEqual(['timeout', 'max_cost']);
  });
});
