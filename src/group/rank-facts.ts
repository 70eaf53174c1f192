import path from 'node:path';
import { claimedBy as claimedByOf } from '../ledger/claim.js';
import { EventLog } from '../ledger/events.js';
import { runCost } from '../ledger/index-log.js';
import { runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import type { RunDetails } from '../ledger/read.js';
import { refusalsOf } from '../review/events.js';
import { countPatchLines } from '../review/patch-lines.js';
import { type Attempt, groupAttempts } from './attempts.js';
import { type AttemptFacts, type Ranking, rankAttempts } from './rank.js';
import type { GroupDetails } from './store.js';

/** How long a run took: start to end, or to `now` while it runs; null when unknown. Pure. */
export function durationOf(run: RunDetails, now: Date): number | null {
  const state = run.state;
  if (!state) return null;
  const start = Date.parse(state.started_at);
  const end = state.ended_at ? Date.parse(state.ended_at) : now.getTime();
  return Number.isNaN(start) || Number.isNaN(end) ? null : Math.max(0, end - start);
}

/** What the ranking reads of one attempt, from its run folder (events.jsonl, changes.patch). */
export function attemptFacts(attempt: Attempt, now: Date): AttemptFacts {
  const { run } = attempt;
  const base = {
    attempt: attempt.attempt,
    run: attempt.name,
    id: attempt.name ? runIdOf(attempt.name) : null,
    model: run?.meta.model ?? attempt.model,
  };
  if (!run) {
    return {
      ...base,
      status: null,
      removed: attempt.name !== null,
      failure: null,
      verified: null,
      applied: null,
      violations: 0,
      refusals: 0,
      diffLines: null,
      costUsd: null,
      durationMs: null,
    };
  }
  const state = run.state;
  // A fetched attempt's state.json and events.jsonl are its publication's word, not facts.
  const p = state?.publication;
  const claimedBy = run.meta.origin ? (p ? claimedByOf(p) : 'unknown') : null;
  const lines = run.files.includes('changes.patch')
    ? countPatchLines(path.join(run.dir, 'changes.patch'))
    : null;
  return {
    ...base,
    status: state?.status ?? null,
    removed: false,
    failure: state?.failure?.kind ?? null,
    verified: state?.output?.verified ?? null,
    applied: state?.output ? state.output.applied || state.output.template === null : null,
    violations: state?.output?.violations ?? 0,
    refusals: refusalsOf(new EventLog(run.dir).read()).length,
    diffLines: lines ? lines.added + lines.removed : null,
    costUsd: runCost(state?.usage),
    durationMs: durationOf(run, now),
    claimedBy,
    revised: (state?.revision?.number ?? 1) > 1 ? state!.revision!.number : null,
  };
}

/** A group's ranking, read from its attempts' runs as they are now (and those attempts). */
export function rankGroup(
  ledger: Ledger,
  group: GroupDetails,
  now = new Date(),
): Ranking & { readonly group: GroupDetails; readonly runs: readonly Attempt[] } {
  const runs = groupAttempts(ledger, group);
  const errors = new Map(group.state.members.map((m) => [m.attempt, m.error ?? null]));
  const facts = runs.map((a) => ({ ...attemptFacts(a, now), startError: errors.get(a.attempt) ?? null }));
  return { ...rankAttempts(facts), group, runs };
}
