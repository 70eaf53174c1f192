import fs from 'node:fs';
import path from 'node:path';
import { type Attempt, groupAttempts, groupStatus } from '../group/attempts.js';
import { findGroup } from '../group/resolve.js';
import { type GroupDetails, groupDir, listGroupNames, readGroup } from '../group/store.js';
import { GROUP_STATE_FILE } from '../group/types.js';
import type { Ledger } from '../ledger/index.js';
import type { RunSummary } from '../ledger/list.js';
import { isRunName } from '../ledger/names.js';
import { shortTask } from '../ledger/text.js';
import type { RunStatus } from '../ledger/types.js';
import { isAlive } from '../process/reap.js';
import { type AttemptFacts, attemptFacts } from './group-facts.js';
import { rankAttempts } from './group-rank.js';
import { HttpError } from './http.js';

/** The group a reference names (name, id, prefix); a 404 naming it when none. */
export function groupNamed(ledger: Ledger, ref: string): GroupDetails {
  const name = findGroup(ledger, ref);
  if (name === null)
    throw new HttpError(404, `no group "${ref}"`, { hint: 'agentbox status lists runs and groups' });
  return readGroup(ledger, name);
}

interface Folded {
  readonly group: GroupDetails;
  readonly attempts: readonly Attempt[];
  readonly status: RunStatus;
  readonly alive: boolean;
}

/**
 * The group's attempts as its state.json names them, each kept only when its run says it is that
 * attempt of this group (meta.yaml `options.group`, written once by the run itself): a group folder
 * that names another run (a hand edit, a fetched group) can neither show nor set aside a run that
 * is not its own. Such a member reads as not started.
 */
export function ownAttempts(ledger: Ledger, group: GroupDetails): Attempt[] {
  return groupAttempts(ledger, group).map((a) => {
    const of = a.run?.meta.options?.group as { id?: unknown; attempt?: unknown } | undefined;
    if (!a.run || (of?.id === group.meta.group_id && of?.attempt === a.attempt)) return a;
    return { ...a, name: null, run: null };
  });
}

function fold(ledger: Ledger, group: GroupDetails): Folded {
  const attempts = ownAttempts(ledger, group);
  const alive = isAlive(group.state.pid, group.state.pid_start);
  return { group, attempts, status: groupStatus(group, attempts, alive), alive };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** `fix ×4 · 2 passed · $0.31`: the group's one line, as `agentbox status` says it. Pure. */
export function groupLabel(attempts: number, passed: number, cost: number): string {
  return `fix ×${attempts} · ${passed} passed · $${cost.toFixed(2)}`;
}

/** `GET /api/groups/<group>`: the group, its status, and its attempts best first with the reasons. */
export function groupDetail(ledger: Ledger, ref: string) {
  const { group, attempts, status, alive } = fold(ledger, groupNamed(ledger, ref));
  const facts = attempts.map((a) => attemptFacts(a));
  const ranking = rankAttempts(facts);
  const byAttempt = new Map(facts.map((f) => [f.attempt, f]));
  const cost = sum(facts.map((f) => f.cost_usd));
  const passed = facts.filter((f) => f.passed).length;
  return {
    name: group.name,
    id: group.meta.group_id,
    meta: group.meta,
    state: group.state,
    status,
    alive,
    cost_usd: cost,
    passed,
    label: groupLabel(group.meta.attempts, passed, cost),
    ranking,
    attempts: ranking.order.map((k) => ({
      ...byAttempt.get(k)!,
      mergeable: mergeable(status, byAttempt.get(k)!),
    })),
  };
}

/** The page offers "Merge this attempt" on an ended attempt with a patch, while the group is undecided. */
function mergeable(status: RunStatus, f: AttemptFacts): boolean {
  if (status === 'MERGED' || status === 'DISCARDED') return false;
  return (
    f.status !== null && !['ACTIVE', 'MERGED', 'DISCARDED', 'DONE'].includes(f.status) && f.stat !== null
  );
}

/** A group as one row of the runs list, with the fields of a run's row and `group`. */
export type GroupRow = RunSummary & {
  readonly group: { readonly attempts: number; readonly passed: number; readonly label: string };
};

function groupRow(group: GroupDetails, attempts: readonly Attempt[], status: RunStatus): GroupRow {
  const facts = attempts.map((a) => attemptFacts(a));
  const cost = sum(facts.map((f) => f.cost_usd));
  const passed = facts.filter((f) => f.passed).length;
  const runs = attempts.flatMap((a) => (a.run?.state ? [a.run.state] : []));
  return {
    name: group.name,
    id: group.meta.group_id,
    type: 'fix',
    status,
    task: shortTask(group.meta.task),
    started_at: group.state.started_at || group.meta.created_at,
    ended_at: group.state.ended_at,
    failure_kind: null,
    cost_usd: cost,
    tool_calls: sum(runs.map((s) => s.tool_calls)),
    problem: null,
    ran_on: null,
    group: { attempts: group.meta.attempts, passed, label: groupLabel(group.meta.attempts, passed, cost) },
  };
}

/** What a group's row was made from: its state.json, its attempts' and whether its process lives. */
function rowSignature(ledger: Ledger, name: string): string | null {
  const dir = groupDir(ledger, name);
  const stamp = (file: string) => {
    try {
      const s = fs.statSync(file);
      return `${s.size}:${s.mtimeMs}`;
    } catch {
      return '-';
    }
  };
  let group: GroupDetails;
  try {
    group = readGroup(ledger, name);
  } catch {
    return null;
  }
  const runs = group.state.members.map((m) =>
    m.run && isRunName(m.run) ? stamp(path.join(ledger.runsDir, m.run, 'state.json')) : '',
  );
  const alive = isAlive(group.state.pid, group.state.pid_start);
  return [stamp(path.join(dir, GROUP_STATE_FILE)), alive, ...runs].join(' ');
}

interface KeptRow {
  readonly signature: string;
  readonly row: GroupRow;
  readonly attemptRuns: readonly string[];
}

/**
 * Each group's row, made again only when its state.json, an attempt's state.json or the life of
 * its process changed (a few stats per group): the runs list is asked on every change of the
 * ledger, and a row reads every attempt's run.
 */
const kept = new Map<string, Map<string, KeptRow>>();

/** Every group as a row, and the run names of their attempts (the rows they stand for). */
export function groupRows(ledger: Ledger): { rows: GroupRow[]; attemptRuns: Set<string> } {
  const rows: GroupRow[] = [];
  const attemptRuns = new Set<string>();
  const memo = kept.get(ledger.dir) ?? new Map<string, KeptRow>();
  kept.set(ledger.dir, memo);
  const names = listGroupNames(ledger);
  for (const name of names) {
    const signature = rowSignature(ledger, name);
    // A group being created, or damaged: its runs are listed on their own.
    if (signature === null) continue;
    let entry = memo.get(name);
    if (entry?.signature !== signature) {
      const group = readGroup(ledger, name);
      const { attempts, status } = fold(ledger, group);
      const runs = attempts.flatMap((a) => (a.name && a.run ? [a.name] : []));
      entry = { signature, row: groupRow(group, attempts, status), attemptRuns: runs };
      memo.set(name, entry);
    }
    for (const run of entry.attemptRuns) attemptRuns.add(run);
    rows.push(entry.row);
  }
  if (memo.size > names.length) for (const name of memo.keys()) if (!names.includes(name)) memo.delete(name);
  return { rows, attemptRuns };
}
