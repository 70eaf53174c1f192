import { formatUsd } from '../budget/format.js';
import { type Attempt, groupAttempts, groupStatus } from '../group/attempts.js';
import { groupStatusClaimed } from '../group/decided.js';
import { rankAttempts } from '../group/rank.js';
import { attemptFacts as rankFacts } from '../group/rank-facts.js';
import { findGroup } from '../group/resolve.js';
import { groupDetail as countsLine } from '../group/row-text.js';
import { type GroupSummary, groupRow } from '../group/status-rows.js';
import { type GroupDetails, readGroup } from '../group/store.js';
import type { Ledger } from '../ledger/index.js';
import { type RunSummary, summaryFromFiles } from '../ledger/list.js';
import { isAlive } from '../process/reap.js';
import { attemptExtras } from './group-facts.js';
import { HttpError } from './http.js';

/** The group a reference names (name, id, prefix); a 404 naming it when none. */
export function groupNamed(ledger: Ledger, ref: string): GroupDetails {
  const name = findGroup(ledger, ref);
  if (name === null)
    throw new HttpError(404, `no group "${ref}"`, { hint: 'agentbox status lists runs and groups' });
  return readGroup(ledger, name);
}

/**
 * The group's attempts as its state.json names them, each kept only when its run says it is that
 * attempt of this group (meta.yaml `options.group`, written once by the run itself): a group folder
 * that names another run (a hand edit, a fetched group) cannot show a run that is not its own as
 * one of its attempts. Such a member reads as not started.
 */
export function ownAttempts(ledger: Ledger, group: GroupDetails): Attempt[] {
  return groupAttempts(ledger, group).map((a) => (a.foreign ? { ...a, name: null, run: null } : a));
}

/** The members a group folder names that are not its own attempts (their run says otherwise). */
export function foreignMembers(ledger: Ledger, group: GroupDetails): string[] {
  return groupAttempts(ledger, group).flatMap((a) => (a.foreign && a.name ? [a.name] : []));
}

/**
 * `fix ×4 · 2 passed · $0.31`: the group's counts as `agentbox status` says them
 * (src/group/row-text.ts), and its cost as the CLI writes one (`$0.0013`, never `$0.00`). Pure.
 */
export function groupLabel(row: GroupSummary): string {
  return `${countsLine(row)} · ${formatUsd(row.cost_usd ?? 0)}`;
}

/** A group's row of the runs list: the status row's fields (`kind: 'group'`, its attempts), and its line. */
export function withLabel(row: GroupSummary): GroupSummary & { readonly label: string } {
  return { ...row, label: groupLabel(row) };
}

/** `GET /api/groups/<group>`: the group, its status, and its attempts best first with the reasons. */
export function groupDetail(ledger: Ledger, ref: string) {
  const group = groupNamed(ledger, ref);
  const attempts = ownAttempts(ledger, group);
  const alive = isAlive(group.state.pid, group.state.pid_start);
  const status = groupStatus(group, attempts, alive && group.state.status === 'ACTIVE');
  const now = new Date();
  // An attempt that could not start says why (its member's error), as `agentbox show` does.
  const errors = new Map(
    group.state.members.map((m) => [m.attempt, m.run === null ? (m.error ?? null) : null]),
  );
  const ranking = rankAttempts(
    attempts.map((a) => ({ ...rankFacts(a, now), startError: errors.get(a.attempt) ?? null })),
  );
  const extras = new Map(attempts.map((a) => [a.attempt, attemptExtras(a)]));
  const summaries = new Map<string, RunSummary | null>(
    attempts.flatMap((a) => (a.name && a.run ? [[a.name, summaryFromFiles(ledger, a.name)] as const] : [])),
  );
  const row = withLabel(groupRow(group, summaries));
  // A MERGED or DISCARDED a fetched group's publication claims decided nothing here (src/group/decided.ts).
  const origin = group.meta.origin;
  const claimed = Boolean(origin) && groupStatusClaimed(group.state, status);
  const decided = (status === 'MERGED' || status === 'DISCARDED') && !claimed;
  const merged = group.state.merged;
  return {
    name: group.name,
    id: group.meta.group_id,
    meta: group.meta,
    state: group.state,
    status,
    claim_line:
      claimed && origin
        ? `its publication claims ${status}${merged ? ` (attempt ${merged.attempt})` : ''}: it ran on ${origin.host}, fetched from ${origin.remote}; nothing of it was decided here`
        : null,
    alive,
    cost_usd: row.cost_usd,
    passed: row.attempts.filter((a) => a.verified === true).length,
    label: row.label,
    ranking: { why: ranking.why, best: ranking.best, tie: ranking.tie },
    attempts: ranking.attempts.map((r) => ({
      attempt: r.attempt,
      place: r.place,
      reason: r.reason,
      run: r.run,
      id: r.id,
      model: r.model,
      status: r.status,
      verified: r.verified,
      applied: r.applied,
      violations: r.violations,
      refusals: r.refusals,
      diff_lines: r.diffLines,
      cost_usd: r.costUsd,
      duration_ms: r.durationMs,
      ...extras.get(r.attempt)!,
      start_error: errors.get(r.attempt) ?? null,
      // "Merge this attempt" where `merge <group> --attempt k` takes it (merge-select.ts namedAttempt).
      mergeable: !decided && r.status === 'REVIEW',
    })),
  };
}
