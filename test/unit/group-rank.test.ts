import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AttemptFacts, decidingKey, rankAttempts } from '../../src/group/rank.js';
import { rankGroup } from '../../src/group/rank-facts.js';
import { countPatchLines, PatchLineCounter } from '../../src/review/patch-lines.js';
import { makeGroup, patchOf } from './fixtures/group.js';
import { ledgerRepo, scratchDir } from './fixtures/ledger.js';

/** A finished attempt that passed everything: 40 lines, $0.10, 60s; `over` changes what differs. */
function facts(attempt: number, over: Partial<AttemptFacts> = {}): AttemptFacts {
  return {
    attempt,
    run: `25-11-23_0800__fix__${String(attempt).repeat(6)}`,
    id: String(attempt).repeat(6),
    model: null,
    status: 'REVIEW',
    removed: false,
    failure: null,
    verified: true,
    applied: true,
    violations: 0,
    refusals: 0,
    diffLines: 40,
    costUsd: 0.1,
    durationMs: 60_000,
    ...over,
  };
}

const order = (fs: AttemptFacts[]) => rankAttempts(fs).attempts.map((a) => a.attempt);

describe('rankAttempts: each key decides in turn, the worse attempt listed first', () => {
  it.each<[string, Partial<AttemptFacts>, Partial<AttemptFacts>, string]>([
    [
      'end',
      { status: 'CRASHED', failure: 'timeout', verified: null },
      {},
      'it finished; attempt 1 did not (crashed: timeout)',
    ],
    ['end', { status: 'ACTIVE', verified: null }, {}, 'it finished; attempt 1 is still running'],
    ['verify', { verified: false }, {}, 'the only one whose checks passed'],
    ['verify', { verified: null }, {}, 'the only one whose checks passed'],
    ['verify', { verified: false }, { verified: null }, "its checks were not run; attempt 1's failed"],
    ['contract', { applied: false }, {}, "its answer followed the output template; attempt 1's did not"],
    ['violations', { violations: 2 }, { violations: 1 }, 'fewer contract violations (1 against 2)'],
    ['refusals', { refusals: 3 }, {}, 'fewer refusals (0 against 3)'],
    ['changes', { diffLines: null }, { diffLines: 900 }, 'attempt 1 changed nothing'],
    ['changes', { diffLines: 0 }, { diffLines: 900 }, 'attempt 1 changed nothing'],
    ['diff', { diffLines: 97 }, { diffLines: 42 }, 'a smaller diff (42 lines against 97)'],
    ['cost', { costUsd: 0.12 }, { costUsd: 0.08 }, 'cheaper ($0.08 against $0.12)'],
    ['cost', { costUsd: null }, { costUsd: 0.08 }, 'cheaper ($0.08 against nothing recorded)'],
    ['duration', { durationMs: 90_000 }, { durationMs: 62_000 }, 'faster (1m 2s against 1m 30s)'],
  ])('%s: %j loses to %j', (key, worse, better, why) => {
    const a = facts(1, worse);
    const b = facts(2, better);
    expect(decidingKey(a, b)).toBe(key);
    const ranking = rankAttempts([a, b]);
    expect(ranking.attempts.map((x) => x.attempt)).toEqual([2, 1]);
    expect(ranking.attempts.map((x) => x.place)).toEqual([1, 2]);
    expect(ranking.why).toBe(`1st: attempt 2 — ${why}`);
    expect(ranking.tie).toEqual([]);
    expect(ranking.best).toBe(2);
  });

  it('a key outweighs every key after it', () => {
    // Failed verify with everything else perfect loses to a passing one worse on everything else.
    const failed = facts(1, { verified: false, diffLines: 1, costUsd: 0.01, durationMs: 1000 });
    const passed = facts(2, {
      violations: 0,
      refusals: 5,
      diffLines: 5000,
      costUsd: 3,
      durationMs: 3_600_000,
    });
    expect(order([failed, passed])).toEqual([2, 1]);
    // A finished attempt whose checks failed still ranks above any that did not finish.
    const crashed = facts(3, { status: 'CRASHED', failure: 'crashed', verified: null });
    expect(order([crashed, failed])).toEqual([1, 3]);
    // Fewer violations beat fewer refusals; fewer refusals beat a smaller diff.
    expect(order([facts(1, { violations: 1 }), facts(2, { refusals: 9 })])).toEqual([2, 1]);
    expect(order([facts(1, { refusals: 1, diffLines: 2 }), facts(2, { diffLines: 2000 })])).toEqual([2, 1]);
  });

  it('the reason line says each count', () => {
    const [a] = rankAttempts([
      facts(1, { diffLines: 42, costUsd: 0.08, refusals: 2, durationMs: 95_000 }),
    ]).attempts;
    expect(a!.reason).toBe('passed runs.verify; 0 violations; 2 refusals; 42 lines; $0.08; 1m 35s');
    const [b] = rankAttempts([
      facts(1, { verified: false, applied: false, violations: 1, diffLines: null }),
    ]).attempts;
    expect(b!.reason).toBe(
      'FAILED runs.verify; output template not applied; 1 violation; no changes; $0.10; 1m',
    );
  });
});

describe('rankAttempts: ties', () => {
  it('attempts equal on every count share first place and are reported as a tie', () => {
    const r = rankAttempts([facts(1, { verified: false }), facts(2), facts(3, { costUsd: 0.2 }), facts(4)]);
    expect(r.attempts.map((a) => [a.attempt, a.place])).toEqual([
      [2, 1],
      [4, 1],
      [3, 3],
      [1, 4],
    ]);
    expect(r.tie).toEqual([2, 4]);
    expect(r.best).toBe(2);
    expect(r.why).toBe('attempts 2 and 4 tie on every count (cost to the cent, duration to the second)');
  });

  it('cost ties to the cent and duration to the second', () => {
    const r = rankAttempts([facts(1, { costUsd: 0.1004, durationMs: 60_400 }), facts(2), facts(3)]);
    expect(r.tie).toEqual([1, 2, 3]);
    expect(r.why).toMatch(/^attempts 1, 2 and 3 tie on every count/);
  });

  it('a tie below first place is no tie for merge', () => {
    const r = rankAttempts([facts(1, { verified: false }), facts(2, { verified: false }), facts(3)]);
    expect(r.tie).toEqual([]);
    expect(r.attempts.map((a) => a.place)).toEqual([1, 2, 2]);
  });

  it('attempts that never finished tie for nothing: there is no best', () => {
    const r = rankAttempts([facts(1, { status: null }), facts(2, { status: null })]);
    expect(r.best).toBeNull();
    expect(r.tie).toEqual([]);
    expect(r.why).toBe('no attempt finished yet: the first, attempt 1, has not started');
  });
});

describe('rankAttempts: attempts not started, running, removed, and after the gate', () => {
  it('orders finished, running, ended badly, not started, removed', () => {
    const r = rankAttempts([
      facts(1, { removed: true, status: null }),
      facts(2, { status: null }),
      facts(3, { status: 'ABORTED', failure: 'budget', verified: null }),
      facts(4, { status: 'ACTIVE', verified: null }),
      facts(5, { status: 'DONE', verified: false }),
    ]);
    expect(r.attempts.map((a) => a.attempt)).toEqual([5, 4, 3, 2, 1]);
    expect(r.attempts.map((a) => a.reason)).toEqual([
      'FAILED runs.verify; 0 violations; 40 lines; $0.10; 1m',
      'still running; 0 violations; 40 lines; $0.10; 1m',
      'aborted (budget) — did not finish; 0 violations; 40 lines; $0.10; 1m',
      'not started',
      'its run folder is gone (agentbox gc)',
    ]);
    expect(r.why).toBe('1st: attempt 5 — it finished; attempt 4 is still running');
  });

  it('a merged attempt and one discarded by the merge still rank as finished; a discarded crash does not', () => {
    const r = rankAttempts([
      facts(1, { status: 'DISCARDED', failure: 'crashed', verified: null }),
      facts(2, { status: 'DISCARDED', diffLines: 10 }),
      facts(3, { status: 'MERGED' }),
    ]);
    expect(r.attempts.map((a) => a.attempt)).toEqual([2, 3, 1]);
    expect(r.best).toBe(2);
  });

  it('one attempt, and none', () => {
    expect(rankAttempts([facts(1)]).why).toBe('1st: attempt 1 — the only attempt');
    expect(rankAttempts([])).toEqual({ attempts: [], best: null, tie: [], why: 'the group has no attempts' });
  });
});

describe('countPatchLines: lines added and removed, read in chunks', () => {
  it('counts hunk lines only, "--- x" and "+++ x" inside a hunk too', () => {
    const patch = `diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@ fn\n ctx\n--- gone\n+++ came\n-x\n+y\n\\ No newline at end of file\ndiff --git a/b b/b\n--- /dev/null\n+++ b/b\n@@ -0,0 +1 @@\n+one\n`;
    const c = new PatchLineCounter();
    c.push(Buffer.from(patch));
    expect(c.end()).toEqual({ added: 3, removed: 2 });
  });

  it('gives the same count however the bytes are cut, and for a file bigger than a chunk', () => {
    const patch = Buffer.from(patchOf(41) + patchOf(1000).replace(/a\/f|b\/f/g, 'x'));
    for (const size of [1, 3, 7, 64, 4096]) {
      const c = new PatchLineCounter();
      for (let i = 0; i < patch.length; i += size) c.push(patch.subarray(i, i + size));
      expect(c.end()).toEqual({ added: 521, removed: 520 });
    }
    const file = path.join(scratchDir(), 'big.patch');
    const long = `+${'x'.repeat(200_000)}`;
    fs.writeFileSync(file, `@@ -0,0 +1,3 @@\n${long}\n${long}\n+z`);
    expect(countPatchLines(file)).toEqual({ added: 3, removed: 0 });
    expect(countPatchLines(path.join(scratchDir(), 'none.patch'))).toBeNull();
  });
});

describe('rankGroup: the facts from the ledger', () => {
  it('reads verdict, contract, refusals, diff size, cost and duration from each attempt', async () => {
    const { ledger } = ledgerRepo();
    const { group, runs } = await makeGroup(ledger, [
      { status: 'REVIEW', verified: false, lines: 10, cost: 0.05, seconds: 30 },
      { status: 'REVIEW', verified: true, lines: 42, cost: 0.08, seconds: 90, refusals: 1 },
      { status: 'REVIEW', verified: true, lines: 42, cost: 0.08, seconds: 90, violations: 2, applied: false },
      { status: null },
    ]);
    const r = rankGroup(ledger, group);
    expect(r.attempts.map((a) => a.attempt)).toEqual([2, 3, 1, 4]);
    expect(r.attempts[0]).toMatchObject({
      run: runs[1]!.name,
      id: runs[1]!.id,
      verified: true,
      refusals: 1,
      diffLines: 42,
      costUsd: 0.08,
      durationMs: 90_000,
      reason: 'passed runs.verify; 0 violations; 1 refusal; 42 lines; $0.08; 1m 30s',
    });
    expect(r.why).toBe("1st: attempt 2 — its answer followed the output template; attempt 3's did not");
    expect(r.attempts[3]).toMatchObject({ status: null, removed: false, reason: 'not started' });
    // gc removed attempt 1's folder: the attempt stays, at the bottom.
    fs.rmSync(runs[0]!.dir, { recursive: true });
    const after = rankGroup(ledger, group);
    expect(after.attempts.at(-1)).toMatchObject({ attempt: 1, removed: true });
  });
});

describe('rankAttempts: an attempt that could not start', () => {
  it('says why in its reason', () => {
    const r = rankAttempts([
      facts(1, { status: null, run: null, startError: 'no worktree:\nENOSPC' }),
      facts(2),
    ]);
    expect(r.attempts[1]!.reason).toBe('could not start: no worktree: ENOSPC');
  });
});
