import { FAILURES, type FoldedRun, STATUSES, TYPES } from './index-log.js';
import { isRunName, runIdOf } from './names.js';

/*
 * The runs of the folded INDEX.jsonl by column, one array per field, each in the same run order:
 * half the parse time of an array per run (2.4 ms against 5.4 for 10,000 runs), and the names
 * tell what each column is. Pure: src/ledger/fold-cache.ts reads and writes them.
 */

export const COLUMNS = [
  'name',
  'type',
  'status',
  'task',
  'started_at',
  'ended_at',
  'failure_kind',
  'cost_usd',
  'tool_calls',
  'ran_on',
  'claimed_by',
  'status_claimed',
  'group',
  'attempt',
  'verified',
  'revision',
] as const;
export type Columns = { [K in (typeof COLUMNS)[number]]: unknown[] };

export function toColumns(runs: readonly FoldedRun[]): Columns {
  const columns = Object.fromEntries(COLUMNS.map((key) => [key, [] as unknown[]])) as Columns;
  for (const run of runs) for (const key of COLUMNS) columns[key].push(run[key] ?? null);
  return columns;
}

/**
 * The runs the columns hold, in their order, when every field is typed as the table expects it
 * (a hand-edited cache cannot put a number where text goes); else null. `runNames`: each name must
 * also be a run name (the caller will use it as a folder name without listing runs/).
 */
export function fromColumns(raw: unknown, runNames: boolean): FoldedRun[] | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const c = raw as Columns;
  const count = Array.isArray(c.name) ? c.name.length : -1;
  for (const key of COLUMNS) if (!Array.isArray(c[key]) || c[key].length !== count) return null;
  const runs: FoldedRun[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const run = runOf(c, i);
    if (!run || (runNames && !isRunName(run.name))) return null;
    runs[i] = run;
  }
  return runs;
}

/** NOTE: one plain function, no callbacks: it runs 10,000 times in a process just started. */
function runOf(c: Columns, i: number): FoldedRun | null {
  const name = c.name[i];
  const type = c.type[i];
  const status = c.status[i];
  const task = c.task[i];
  const started_at = c.started_at[i];
  const ended_at = c.ended_at[i];
  const failure_kind = c.failure_kind[i];
  const cost_usd = c.cost_usd[i];
  const tool_calls = c.tool_calls[i];
  const ran_on = c.ran_on[i];
  const claimed_by = c.claimed_by[i];
  if (typeof name !== 'string' || !TYPES.has(type) || !STATUSES.has(status)) return null;
  if (typeof task !== 'string' || typeof started_at !== 'string') return null;
  if (ended_at !== null && typeof ended_at !== 'string') return null;
  if (failure_kind !== null && !FAILURES.has(failure_kind)) return null;
  if (cost_usd !== null && typeof cost_usd !== 'number') return null;
  if (tool_calls !== null && typeof tool_calls !== 'number') return null;
  if (ran_on !== null && typeof ran_on !== 'string') return null;
  if (claimed_by !== null && typeof claimed_by !== 'string') return null;
  const status_claimed = c.status_claimed[i];
  if (status_claimed !== null && status_claimed !== true) return null;
  const run = {
    name,
    id: runIdOf(name),
    type,
    status,
    task,
    started_at,
    ended_at,
    failure_kind,
    cost_usd,
    tool_calls,
    problem: null,
    ran_on,
    claimed_by,
    ...(status_claimed ? { status_claimed } : {}),
  } as FoldedRun;
  const group = c.group[i];
  // NOTE: only an attempt (a revised run) gets the fields: a plain run's object keeps its shape (and its JSON).
  const whole = group === null ? run : attemptOf(run, group, c.attempt[i], c.verified[i]);
  const revision = c.revision[i];
  if (revision === null || whole === null) return whole;
  return typeof revision === 'number' ? { ...whole, revision } : null;
}

function attemptOf(run: FoldedRun, group: unknown, attempt: unknown, verified: unknown): FoldedRun | null {
  if (typeof group !== 'string' || typeof attempt !== 'number') return null;
  if (verified !== null && typeof verified !== 'boolean') return null;
  return { ...run, group, attempt, verified };
}
