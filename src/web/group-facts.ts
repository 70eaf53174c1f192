import fs from 'node:fs';
import path from 'node:path';
import { gateOf, type NotPassing } from '../gate/merge-gate.js';
import type { Attempt } from '../group/attempts.js';
import { EventLog } from '../ledger/events.js';
import { runCost } from '../ledger/index-log.js';
import type { RunState, RunStatus } from '../ledger/types.js';
import type { RankFacts } from './group-rank.js';

/** One attempt as the group page shows it: its run's verdicts, cost, time and diff size. */
export interface AttemptFacts extends RankFacts {
  readonly model: string | null;
  /** The run's folder name and short id; null: it has not started. */
  readonly run: string | null;
  readonly id: string | null;
  readonly status: RunStatus | null;
  readonly cost_usd: number;
  /** Part of the cost is agentbox's estimate (a process still runs). */
  readonly estimated: boolean;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  readonly stat: DiffStat | null;
  /** Why it is not a passing attempt (the merge gate's words); null: it passed, or it is not waiting for the gate. */
  readonly not_passing: NotPassing | null;
  readonly failure: string | null;
}

export interface DiffStat {
  readonly files: number;
  readonly insertions: number;
  readonly deletions: number;
}

/** Files, added and removed lines of a unified patch. Pure. */
export function diffStat(patch: string): DiffStat {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      files++;
      inHunk = false;
    } else if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) insertions++;
    else if (inHunk && line.startsWith('-')) deletions++;
  }
  return { files, insertions, deletions };
}

/** The refusals in a run's events (the guard, claude, the sandbox, the human gate). Pure. */
export function refusalCount(events: readonly Record<string, unknown>[]): number {
  return events.filter(
    (e) => e.event === 'human_gate_refused' || e.event === 'refused' || e.decision === 'deny',
  ).length;
}

/** The patch is read for its stat up to this size; a larger one has no stat here. */
const STAT_MAX = 5 * 1024 * 1024;

function patchStat(dir: string): DiffStat | null {
  const file = path.join(dir, 'changes.patch');
  try {
    if (fs.statSync(file).size > STAT_MAX) return null;
    return diffStat(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The attempt ended with changes and no check failed: the merge gate's "passing", read from the
 * state alone so it holds after the merge too (the taken attempt is MERGED, the others DISCARDED).
 */
function passedChecks(state: RunState | null): boolean {
  if (!state || !['REVIEW', 'MERGED', 'DISCARDED'].includes(state.status)) return false;
  return state.failure === null && state.output?.verified !== false && state.setup?.ok !== false;
}

/** What the page and the ranking read of one attempt, from its run's files. */
export function attemptFacts(attempt: Attempt, now = Date.now()): AttemptFacts {
  const run = attempt.run;
  const state = run?.state ?? null;
  const events = run ? new EventLog(run.dir).read() : [];
  const stat = run ? patchStat(run.dir) : null;
  const started = state ? Date.parse(state.started_at) : Number.NaN;
  const ended = state?.ended_at ? Date.parse(state.ended_at) : now;
  const gate = run ? gateOf(run, events) : null;
  return {
    attempt: attempt.attempt,
    model: state?.model_used ?? attempt.model,
    run: attempt.name,
    id: run?.meta.run_id ?? null,
    status: state?.status ?? null,
    started: attempt.name !== null,
    passed: passedChecks(state),
    verified: state?.output?.verified ?? null,
    violations: state?.output?.violations ?? 0,
    refusals: refusalCount(events),
    diff_lines: stat ? stat.insertions + stat.deletions : 0,
    cost_usd: runCost(state?.usage) ?? 0,
    estimated: Boolean(state?.usage?.agent?.estimated || state?.usage?.supervisor?.estimated),
    duration_ms: Number.isNaN(started) ? 0 : Math.max(0, ended - started),
    started_at: state?.started_at ?? null,
    ended_at: state?.ended_at ?? null,
    stat,
    not_passing: gate,
    failure: state?.failure ? `${state.failure.kind}: ${state.failure.message}` : null,
  };
}
