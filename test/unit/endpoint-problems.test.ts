import { describe, expect, it } from 'vitest';
import { endpointProblems } from '../../src/run/begin/endpoint-problems.js';
import { LogSample } from '../../src/run/begin/log-sample.js';

/** What a run logs of its endpoint's refusals (src/run/begin/endpoint-problems.ts): all, within bounds. */
function harness() {
  const logged: Record<string, unknown>[] = [];
  const problem = endpointProblems({ append: (e) => logged.push(e) });
  return { logged, problem };
}

describe('endpointProblems', () => {
  it('logs each refusal with its status, reason and path, and counts them', () => {
    const h = harness();
    h.problem({ status: 401, reason: 'missing or wrong secret', path: '/hook/Stop' });
    h.problem({ status: 413, reason: 'body of 9 bytes is over the 8-byte limit', path: '/hook/Stop' });
    expect(h.logged).toEqual([
      {
        event: 'endpoint_problem',
        status: 401,
        reason: 'missing or wrong secret',
        path: '/hook/Stop',
        count: 1,
      },
      expect.objectContaining({ status: 413, count: 1 }),
    ]);
  });

  it('a flood through the proxy bridge: 20 of a status, then every 100th up to 10,000, then every 10,000th; short paths', () => {
    const h = harness();
    for (let i = 0; i < 100_000; i++)
      h.problem({
        status: 401,
        reason: 'missing or wrong secret',
        path: `/x${i}${'y'.repeat(4000)}\x1b]52;c;AA\x07`,
      });
    expect(h.logged.map((e) => e.count).slice(0, 21)).toEqual(
      [...Array(20).keys()].map((i) => i + 1).concat(100),
    );
    expect(h.logged.length).toBe(20 + 100 + 9);
    expect(h.logged.at(-1)).toMatchObject({ count: 100_000 });
    for (const e of h.logged) expect((e.path as string).length).toBeLessThanOrEqual(200);
    expect(h.logged.map((e) => e.path).join('')).not.toMatch(/[\x00-\x1f\x7f]/);
    expect(JSON.stringify(h.logged).length).toBeLessThan(100_000);
  });

  it('another status is counted apart: its first 20 are logged in a flood of the other', () => {
    const h = harness();
    for (let i = 0; i < 1000; i++) h.problem({ status: 401, reason: 'missing or wrong secret', path: '/' });
    h.problem({ status: 400, reason: 'body is not valid JSON', path: '/hook/Stop' });
    expect(h.logged.filter((e) => e.status === 400)).toHaveLength(1);
  });
});

describe('LogSample', () => {
  it('past its keys, the rest count as one', () => {
    const sample = new LogSample({
      first: 1,
      every: 10,
      thinAfter: 1000,
      later: 1000,
      keys: 2,
      overflow: 'more',
    });
    expect(['a', 'b', 'c', 'd', 'a'].map((k) => sample.take(k))).toEqual([
      { key: 'a', count: 1, total: 1, write: true },
      { key: 'b', count: 1, total: 2, write: true },
      { key: 'more', count: 1, total: 3, write: true },
      { key: 'more', count: 2, total: 4, write: false },
      { key: 'a', count: 2, total: 5, write: false },
    ]);
  });
});
