import fs from 'node:fs';
import path from 'node:path';
import { listRuns, type RunSummary, summaryFromFiles } from '../ledger/list.js';
import { isRunName, runIdOf } from '../ledger/names.js';
import { compareRuns } from '../ledger/order.js';
import type { Ledger } from '../ledger/paths.js';
import type { RunDetails } from '../ledger/read.js';
import { shortTask } from '../ledger/text.js';
import type { RunStatus } from '../ledger/types.js';
import { isAlive } from '../process/reap.js';
import { type Attempt, groupStatus } from './attempts.js';
import { groupStatusClaimed } from './decided.js';
import { type GroupDetails, listGroupNames, readGroup } from './store.js';
import type { GroupHalt } from './types.js';

/*
 * `agentbox status` with groups: a group is one row, its attempts are not listed. Loaded only when
 * the ledger has a groups/ folder: a ledger without one lists its runs as it always has.
 */

/** One attempt in its group's row (`status --json`). */
export interface AttemptSummary {
  readonly attempt: number;
  /** null: not started. */
  readonly run: string | null;
  readonly id: string | null;
  readonly model: string | null;
  /** null: not started, or its folder is gone. */
  readonly status: RunStatus | null;
  readonly verified: boolean | null;
  readonly cost_usd: number | null;
  /** Why it could not start (no run: recover starts it again); null: it started, or waits its turn. */
  readonly error: string | null;
}

/** A group's row: shaped as a run's (the table and `--json` read the same fields), and its attempts. */
export interface GroupSummary extends Omit<RunSummary, 'type' | 'status' | 'group' | 'attempt' | 'verified'> {
  readonly kind: 'group';
  readonly type: 'fix';
  readonly status: RunStatus;
  readonly halted: GroupHalt['reason'] | null;
  /** The attempt `agentbox merge` took. */
  readonly merged: number | null;
  readonly attempts: readonly AttemptSummary[];
}

export type StatusRow = RunSummary | GroupSummary;

export const isGroupRow = (row: StatusRow): row is GroupSummary => 'kind' in row && row.kind === 'group';

/**
 * The group's status from its attempts' summaries: groupStatus reads only each attempt's name and
 * status. NOTE: it is given the status alone, not the run read whole (status reads no meta.yaml).
 */
function statusOf(group: GroupDetails, attempts: readonly AttemptSummary[]): RunStatus {
  const asAttempts: Attempt[] = attempts.map((a) => ({
    attempt: a.attempt,
    model: a.model,
    name: a.run,
    run: a.status === null ? null : ({ state: { status: a.status } } as unknown as RunDetails),
  }));
  const alive = group.state.status === 'ACTIVE' && isAlive(group.state.pid, group.state.pid_start);
  return groupStatus(group, asAttempts, alive);
}

const sum = (values: readonly (number | null)[]): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((t, v) => t + (v ?? 0), 0) : null;

/** A group's row from its attempts' run summaries (null: the attempt's folder is gone). Pure but for the pid check. */
export function groupRow(group: GroupDetails, runs: ReadonlyMap<string, RunSummary | null>): GroupSummary {
  // A member counts only when its run says it is this group's attempt (state.json is untrusted).
  const id = runIdOf(group.name);
  const summaries = group.state.members.map((m) => {
    const s = m.run ? (runs.get(m.run) ?? null) : null;
    return s && s.group === id && s.attempt === m.attempt ? s : null;
  });
  const attempts = group.state.members.map((m, i): AttemptSummary => {
    const s = summaries[i];
    return {
      attempt: m.attempt,
      run: m.run,
      id: m.run ? runIdOf(m.run) : null,
      model: m.model,
      status: s?.status ?? null,
      verified: s?.verified ?? null,
      cost_usd: s?.cost_usd ?? null,
      error: m.run === null ? (m.error ?? null) : null,
    };
  });
  const ran = summaries.filter((s): s is RunSummary => s !== null);
  return {
    kind: 'group',
    name: group.name,
    id: group.meta.group_id,
    type: 'fix',
    status: statusOf(group, attempts),
    task: shortTask(group.meta.task),
    started_at: group.state.started_at || group.meta.created_at,
    ended_at: group.state.ended_at,
    failure_kind: null,
    cost_usd: sum(ran.map((s) => s.cost_usd)),
    tool_calls: sum(ran.map((s) => s.tool_calls)),
    problem: null,
    // A fetched group: where it ran, who published it (its attempts' publication), what it claims.
    ran_on: group.meta.origin?.host ?? null,
    claimed_by: group.meta.origin ? (ran.find((s) => s.claimed_by)?.claimed_by ?? 'unknown') : null,
    ...(group.meta.origin && groupStatusClaimed(group.state) ? { status_claimed: true } : {}),
    halted: group.state.halted?.reason ?? null,
    merged: group.state.merged?.attempt ?? null,
    attempts,
  };
}

/** A group folder that cannot be read: a row saying so, as a damaged run's is. */
function damagedRow(name: string, error: unknown): RunSummary {
  return {
    name,
    id: runIdOf(name),
    type: null,
    status: null,
    task: '',
    started_at: null,
    ended_at: null,
    failure_kind: null,
    cost_usd: null,
    tool_calls: null,
    problem: `group: ${error instanceof Error ? error.message : String(error)}`,
    ran_on: null,
    claimed_by: null,
  };
}

/**
 * A run's summary from its files, or null when its folder is gone. NOTE: a group's state.json is
 * untrusted (a hand edit, a fetched group): a member that is no run name is never made a path.
 */
function summaryIfThere(ledger: Ledger, name: string): RunSummary | null {
  if (!isRunName(name)) return null;
  return fs.existsSync(path.join(ledger.runsDir, name)) ? summaryFromFiles(ledger, name) : null;
}

/** The newest runs that are no group's attempt: at least `limit` of them when there are as many. */
function plainRuns(ledger: Ledger, groups: readonly GroupDetails[], limit: number | undefined) {
  const members = new Set(groups.flatMap((g) => g.state.members.flatMap((m) => (m.run ? [m.run] : []))));
  const ids = new Set(groups.map((g) => runIdOf(g.name)));
  // A run is hidden in its group's row only when the run itself says it is that group's attempt: a
  // group's state.json naming another run cannot hide it. An attempt whose group folder is gone is
  // listed as a run of its own.
  const isAttempt = (r: RunSummary) => r.group !== undefined && ids.has(r.group);
  // First as wide as the newest groups' attempts could make it; wider while attempts fill it.
  let window =
    limit === undefined ? undefined : limit + groups.slice(-limit).reduce((n, g) => n + g.meta.attempts, 0);
  for (;;) {
    const { runs, total } = listRuns(ledger, window === undefined ? {} : { limit: window });
    const plain = runs.filter((r) => !isAttempt(r));
    const whole = runs.length >= total;
    if (window === undefined || limit === undefined || whole || plain.length >= limit)
      return { runs, plain, total, whole, members };
    window *= 2;
  }
}

/**
 * The rows of `agentbox status`, newest first: the runs that are no group's attempt, and one row
 * per group. `limit`: the newest rows only (the attempts of the groups shown are read from their
 * files when the listing's window did not hold them); `total` counts rows, not run folders.
 */
export function listStatusRows(
  ledger: Ledger,
  opts: { limit?: number } = {},
): { rows: StatusRow[]; total: number } {
  const groups: GroupDetails[] = [];
  const damaged: RunSummary[] = [];
  for (const name of listGroupNames(ledger)) {
    try {
      groups.push(readGroup(ledger, name));
    } catch (error) {
      damaged.push(damagedRow(name, error));
    }
  }
  const { runs, plain, total, whole, members } = plainRuns(ledger, groups, opts.limit);
  const byName = new Map<string, RunSummary | null>(runs.map((r) => [r.name, r]));
  // Groups in listing order with the runs: only those that make the cut are read further.
  const stubs = groups.map((g) => ({ name: g.name, started_at: g.state.started_at, stub: g }));
  const ordered = [...plain, ...damaged, ...stubs].sort(compareRuns);
  const shown = opts.limit === undefined ? ordered : ordered.slice(0, opts.limit);
  const rows = shown.map((row): StatusRow => {
    if (!('stub' in row)) return row;
    for (const m of row.stub.state.members)
      if (m.run && !whole && !byName.has(m.run)) byName.set(m.run, summaryIfThere(ledger, m.run));
    return groupRow(row.stub, byName);
  });
  const attemptsThere = whole
    ? runs.length - plain.length
    : [...members].filter((n) => byName.get(n) ?? summaryIfThere(ledger, n)).length;
  return { rows, total: total - attemptsThere + groups.length + damaged.length };
}
