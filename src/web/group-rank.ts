/**
 * The order the group page shows a group's attempts in, best first, and why. NOTE: the page's own
 * copy until `agentbox show <group>`'s ranking is on main (src/group/): then this file goes and the
 * page calls that one, so the page and the terminal never order a group differently.
 */

/** What the ranking reads of one attempt. */
export interface RankFacts {
  readonly attempt: number;
  /** false: it never started (waits its turn, or the group was halted first). */
  readonly started: boolean;
  /** Ended REVIEW with no check failed (the merge gate's "passing"). */
  readonly passed: boolean;
  /** runs.verify's verdict; null: not run. */
  readonly verified: boolean | null;
  readonly violations: number;
  readonly refusals: number;
  /** Lines added and removed. */
  readonly diff_lines: number;
  readonly cost_usd: number;
  readonly duration_ms: number;
}

interface Key {
  readonly why: string;
  readonly of: (f: RankFacts) => number;
}

/** Each key in turn: the first that differs orders two attempts (lower first). */
const KEYS: readonly Key[] = [
  { why: 'it started', of: (f) => (f.started ? 0 : 1) },
  { why: 'it passed', of: (f) => (f.passed ? 0 : 1) },
  { why: 'runs.verify passed', of: (f) => (f.verified === true ? 0 : f.verified === null ? 1 : 2) },
  { why: 'fewer contract violations', of: (f) => f.violations },
  { why: 'fewer refusals', of: (f) => f.refusals },
  { why: 'a smaller diff', of: (f) => f.diff_lines },
  { why: 'it cost less', of: (f) => f.cost_usd },
  { why: 'it took less time', of: (f) => f.duration_ms },
];

function firstDifference(a: RankFacts, b: RankFacts): Key | null {
  return KEYS.find((k) => k.of(a) !== k.of(b)) ?? null;
}

export interface Ranking {
  /** Attempt numbers, best first. */
  readonly order: readonly number[];
  /** One line per neighbour pair: why the one goes before the next, or that they tie. */
  readonly reasons: readonly string[];
  /** The best attempts tie on every key (the person picks). */
  readonly tied: boolean;
}

/** Best first; ties keep the attempts' order. Pure. */
export function rankAttempts(facts: readonly RankFacts[]): Ranking {
  const sorted = [...facts].sort((a, b) => {
    const key = firstDifference(a, b);
    return key ? key.of(a) - key.of(b) : a.attempt - b.attempt;
  });
  const reasons = sorted.slice(1).map((next, i) => {
    const before = sorted[i]!;
    const key = firstDifference(before, next);
    return key
      ? `attempt ${before.attempt} before ${next.attempt}: ${key.why}`
      : `attempt ${before.attempt} and ${next.attempt} tie`;
  });
  const [first, second] = sorted;
  const tied = first !== undefined && second !== undefined && first.passed && !firstDifference(first, second);
  return { order: sorted.map((f) => f.attempt), reasons, tied };
}
