import { formatUsd } from '../budget/format.js';
import { formatDuration } from '../config/duration.js';
import { oneLine } from '../ledger/text.js';
import type { FailureKind, RunStatus } from '../ledger/types.js';

/*
 * The ranking of a group's attempts (`agentbox show <group>`, report.md, `merge <group>`): pure
 * facts in, an order with its reasons out. The facts are gathered in rank-facts.ts.
 */

/** What the ranking reads of one attempt. */
export interface AttemptFacts {
  readonly attempt: number;
  /** The run's folder name; null: not started. */
  readonly run: string | null;
  readonly id: string | null;
  readonly model: string | null;
  /** null: not started, or its folder is gone (`removed`). */
  readonly status: RunStatus | null;
  /** It started, and its run folder is gone since (`agentbox gc`). */
  readonly removed: boolean;
  readonly failure: FailureKind | null;
  /** runs.verify's outcome; null: not run. */
  readonly verified: boolean | null;
  /** The output contract: the answer was formatted by the template; null: no verdict recorded. */
  readonly applied: boolean | null;
  readonly violations: number;
  /** Refused tool calls (guard, Claude Code, the sandbox, the gate), as `show` counts them. */
  readonly refusals: number;
  /** Lines added plus removed in changes.patch; null: no patch (nothing changed, or not yet). */
  readonly diffLines: number | null;
  readonly costUsd: number | null;
  readonly durationMs: number | null;
  /** Why it could not be started (its worktree, its run folder): it will not be tried again. */
  readonly startError?: string | null;
  /**
   * Who claims its status, verdicts, refusals, cost and time: a run fetched from another machine's
   * publication (src/gate/claims.ts); null or absent: a run of this machine, its facts checked here.
   */
  readonly claimedBy?: string | null;
  /**
   * The revision it is on when the person revised it (2 or more; `agentbox revise`): their choice,
   * which `merge <group>` takes over the ranking's. Absent or null: never revised.
   */
  readonly revised?: number | null;
}

export interface RankedAttempt extends AttemptFacts {
  /** 1-based; attempts that tie share it. */
  readonly place: number;
  /** Why it sits there, in one line: "passed runs.verify; 0 violations; 42 lines; $0.08". */
  readonly reason: string;
}

export interface Ranking {
  /** Best first. */
  readonly attempts: readonly RankedAttempt[];
  /** The first-placed attempt when it reached REVIEW or DONE, else null (no attempt did). */
  readonly best: number | null;
  /** Attempts tied for first place among those that finished (empty: no tie): merge asks which. */
  readonly tie: readonly number[];
  /** One sentence on the order of the first two. */
  readonly why: string;
}

const REACHED: readonly (RunStatus | null)[] = ['REVIEW', 'DONE', 'MERGED'];
const RUNNING: readonly (RunStatus | null)[] = ['ACTIVE', 'STALLED'];

/**
 * 0 reached REVIEW or DONE (after the gate too: MERGED, or DISCARDED without a failure), 1 still
 * running, 2 ended without reaching them, 3 not started, 4 its run folder is gone.
 */
export function tierOf(f: AttemptFacts): number {
  if (f.removed) return 4;
  if (f.status === null) return 3;
  if (REACHED.includes(f.status) || (f.status === 'DISCARDED' && f.failure === null)) return 0;
  return RUNNING.includes(f.status) ? 1 : 2;
}

const verdictKey = (f: AttemptFacts) => (f.verified === true ? 0 : f.verified === null ? 1 : 2);
const hasChanges = (f: AttemptFacts) => f.diffLines !== null && f.diffLines > 0;
// Cost to the cent and duration to the second: finer differences are noise, not a better attempt.
const cents = (f: AttemptFacts) =>
  f.costUsd === null ? Number.POSITIVE_INFINITY : Math.round(f.costUsd * 100);
const seconds = (f: AttemptFacts) =>
  f.durationMs === null ? Number.POSITIVE_INFINITY : Math.round(f.durationMs / 1000);

/** The keys in order, most important first; lower is better. */
const KEYS: readonly { readonly name: string; readonly of: (f: AttemptFacts) => number }[] = [
  { name: 'end', of: tierOf },
  { name: 'verify', of: verdictKey },
  { name: 'contract', of: (f) => (f.applied === false ? 1 : 0) },
  { name: 'violations', of: (f) => f.violations },
  { name: 'refusals', of: (f) => f.refusals },
  // A change to merge before none: a fix that changed nothing is no fix to take.
  { name: 'changes', of: (f) => (hasChanges(f) ? 0 : 1) },
  { name: 'diff', of: (f) => f.diffLines ?? 0 },
  { name: 'cost', of: cents },
  { name: 'duration', of: seconds },
];

/** The first key on which `a` and `b` differ, or null when they tie on every one. Pure. */
export function decidingKey(a: AttemptFacts, b: AttemptFacts): string | null {
  for (const key of KEYS) if (key.of(a) !== key.of(b)) return key.name;
  return null;
}

function compareFacts(a: AttemptFacts, b: AttemptFacts): number {
  for (const key of KEYS) {
    const d = key.of(a) - key.of(b);
    if (d !== 0 && !Number.isNaN(d)) return d;
  }
  return a.attempt - b.attempt;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The verify verdict, or how the attempt ended when it did not finish. Pure. */
function endPart(f: AttemptFacts): string {
  switch (tierOf(f)) {
    case 4:
      return 'its run folder is gone (agentbox gc)';
    case 3:
      return f.startError ? `could not start: ${oneLine(f.startError)}` : 'not started';
    case 1:
      return 'still running';
    case 2:
      return `${f.status?.toLowerCase()}${f.failure ? ` (${f.failure})` : ''} — did not finish`;
    default:
      return f.verified === true
        ? 'passed runs.verify'
        : f.verified === false
          ? 'FAILED runs.verify'
          : 'runs.verify not run';
  }
}

/** How an attempt that did not finish stands, after its name. Pure. */
function notFinished(f: AttemptFacts): string {
  const tier = tierOf(f);
  if (tier === 1) return 'is still running';
  if (tier === 3) return 'has not started';
  if (tier === 4) return 'is gone (agentbox gc)';
  return `did not (${f.status?.toLowerCase()}${f.failure ? `: ${f.failure}` : ''})`;
}

/** One attempt's reason line. Pure. */
export function reasonOf(f: AttemptFacts): string {
  const parts = [endPart(f)];
  if (tierOf(f) >= 3) return parts[0]!;
  if (f.applied === false) parts.push('output template not applied');
  parts.push(plural(f.violations, 'violation'));
  if (f.refusals > 0) parts.push(plural(f.refusals, 'refusal'));
  parts.push(hasChanges(f) ? plural(f.diffLines!, 'line') : 'no changes');
  if (f.costUsd !== null) parts.push(formatUsd(f.costUsd));
  if (f.durationMs !== null) parts.push(formatDuration(f.durationMs));
  if (f.revised) parts.push(`revised by you (revision ${f.revised})`);
  return parts.join('; ');
}

const listed = (ks: readonly number[]) =>
  ks.length <= 2 ? ks.join(' and ') : `${ks.slice(0, -1).join(', ')} and ${ks.at(-1)}`;

/** Why `a` (first) comes before `b` (second), on the key that decides. Pure. */
function beforeWhy(a: AttemptFacts, b: AttemptFacts, all: readonly AttemptFacts[], key: string): string {
  const other = `attempt ${b.attempt}`;
  switch (key) {
    case 'end':
      return `it finished; ${other} ${notFinished(b)}`;
    case 'verify': {
      const passed = all.filter((f) => tierOf(f) === 0 && f.verified === true).length;
      if (a.verified === true && passed === 1) return 'the only one whose checks passed';
      return a.verified === true
        ? `its checks passed; ${other}'s ${b.verified === false ? 'failed' : 'were not run'}`
        : `its checks were not run; ${other}'s failed`;
    }
    case 'contract':
      return `its answer followed the output template; ${other}'s did not`;
    case 'violations':
      return `fewer contract violations (${a.violations} against ${b.violations})`;
    case 'refusals':
      return `fewer refusals (${a.refusals} against ${b.refusals})`;
    case 'changes':
      return `${other} changed nothing`;
    case 'diff':
      return `a smaller diff (${a.diffLines} lines against ${b.diffLines})`;
    case 'cost':
      return `cheaper (${formatUsd(a.costUsd ?? 0)} against ${b.costUsd === null ? 'nothing recorded' : formatUsd(b.costUsd)})`;
    default:
      return `faster (${formatDuration(a.durationMs ?? 0)} against ${b.durationMs === null ? 'unknown' : formatDuration(b.durationMs)})`;
  }
}

/**
 * Ranks a group's attempts, best first: whether it finished (REVIEW/DONE), runs.verify (passed,
 * not run, failed), the output contract (template applied, fewer violations), fewer refusals, a
 * change to merge and a smaller one, lower cost (to the cent), shorter duration (to the second).
 * Attempts equal on every key share a place. Pure.
 */
export function rankAttempts(facts: readonly AttemptFacts[]): Ranking {
  const sorted = [...facts].sort(compareFacts);
  const attempts: RankedAttempt[] = [];
  sorted.forEach((f, i) => {
    const prev = attempts[i - 1];
    const place = prev && decidingKey(prev, f) === null ? prev.place : i + 1;
    attempts.push({ ...f, place, reason: reasonOf(f) });
  });
  const first = attempts[0];
  if (!first) return { attempts, best: null, tie: [], why: 'the group has no attempts' };
  const finished = tierOf(first) === 0;
  const top = attempts.filter((a) => a.place === 1).map((a) => a.attempt);
  const tie = finished && top.length > 1 ? top : [];
  return { attempts, best: finished ? first.attempt : null, tie, why: whyOf(attempts, top, finished) };
}

function whyOf(attempts: readonly RankedAttempt[], top: readonly number[], finished: boolean): string {
  const first = attempts[0]!;
  const second = attempts[1];
  if (!finished) return `no attempt finished yet: the first, attempt ${first.attempt}, ${notFinished(first)}`;
  if (top.length > 1)
    return `attempts ${listed(top)} tie on every count (cost to the cent, duration to the second)`;
  if (!second) return `1st: attempt ${first.attempt} — the only attempt`;
  const key = decidingKey(first, second)!;
  return `1st: attempt ${first.attempt} — ${beforeWhy(first, second, attempts, key)}`;
}
