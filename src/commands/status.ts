import { formatUsd } from '../budget/format.js';
import type { CommandContext } from '../cli/context.js';
import { type Styler, styler } from '../cli/style.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
// NOTE: the modules, not the ledger's index: `status` must not load the writing half of the ledger.
import { listRuns, type RunSummary } from '../ledger/list.js';
import { openLedger } from '../ledger/paths.js';
import type { RunStatus } from '../ledger/types.js';

export interface StatusOptions {
  readonly json?: boolean;
  readonly all?: boolean;
  /** As typed after -n/--limit; commander passes the text. */
  readonly limit?: string;
}

const TASK_WIDTH = 60;

export function parseLimit(text: string): number {
  if (!/^[1-9]\d{0,8}$/.test(text.trim())) {
    throw new AgentboxError(
      'USAGE',
      `invalid --limit ${JSON.stringify(text)}: expected a positive whole number`,
      {
        hint: 'for example: agentbox status --limit 50, or agentbox status --all',
      },
    );
  }
  return Number(text.trim());
}

/** `3s`, `5m`, `2h`, `4d`, then the date: how long ago a run started. */
export function formatAge(startedAt: string | null, now: Date): string {
  if (!startedAt) return '?';
  const started = Date.parse(startedAt);
  if (Number.isNaN(started)) return '?';
  const s = Math.max(0, Math.floor((now.getTime() - started) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  if (s < 30 * 86_400) return `${Math.floor(s / 86_400)}d`;
  return startedAt.slice(0, 10);
}

export function colourStatus(status: RunStatus | null, style: Styler): (text: string) => string {
  switch (status) {
    case 'DONE':
    case 'MERGED':
      return style.ok;
    case 'ACTIVE':
      return style.cyan;
    case 'REVIEW':
      return style.warn;
    case 'CRASHED':
    case 'STALLED':
    case 'ABORTED':
    case 'FAILED':
      return style.bad;
    default:
      return style.dim;
  }
}

/** Task text safe for a terminal: no control characters (escape sequences), one line, cut. */
function taskCell(task: string): string {
  const clean = task.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  const points = Array.from(clean);
  return points.length > TASK_WIDTH ? `${points.slice(0, TASK_WIDTH - 1).join('')}…` : clean;
}

/** The table `agentbox status` prints, newest first, with a footer when runs were left out. Pure. */
export function renderStatusTable(
  runs: readonly RunSummary[],
  total: number,
  now: Date,
  style: Styler,
): string {
  const rows = runs.map((run) => ({
    run: run.name,
    type: run.type ?? '?',
    status: run.status ?? '?',
    colour: colourStatus(run.status, style),
    age: formatAge(run.started_at, now),
    cost: run.cost_usd === null ? '—' : formatUsd(run.cost_usd),
    task: run.problem && !run.status ? `(${run.problem})` : taskCell(run.task),
  }));
  const width = (key: 'run' | 'type' | 'status' | 'age' | 'cost', title: string) =>
    Math.max(title.length, ...rows.map((row) => row[key].length));
  const w = { run: width('run', 'RUN'), type: width('type', 'TYPE'), status: width('status', 'STATUS') };
  const age = width('age', 'AGE');
  const cost = width('cost', 'COST');
  const lines = [
    style.dim(
      `${'RUN'.padEnd(w.run)}  ${'TYPE'.padEnd(w.type)}  ${'STATUS'.padEnd(w.status)}  ${'AGE'.padStart(age)}  ${'COST'.padStart(cost)}  TASK`,
    ),
  ];
  for (const row of rows) {
    const status = row.colour(row.status.padEnd(w.status));
    lines.push(
      `${row.run.padEnd(w.run)}  ${row.type.padEnd(w.type)}  ${status}  ${row.age.padStart(age)}  ${row.cost.padStart(cost)}  ${row.task}`.trimEnd(),
    );
  }
  const hidden = total - runs.length;
  if (hidden > 0) {
    lines.push(style.dim(`… ${hidden.toLocaleString('en-US')} more — agentbox status --all`));
  }
  return `${lines.join('\n')}\n`;
}

/** `agentbox status`: the runs of this repository, newest first. */
export async function status(ctx: CommandContext, opts: StatusOptions = {}): Promise<number> {
  // Checked even with --all: a typo should not pass silently.
  const parsed = parseLimit(opts.limit ?? '20');
  const limit = opts.all ? undefined : parsed;
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  const { runs, total } = listRuns(ledger, { limit });
  if (opts.json) {
    ctx.io.out(`${JSON.stringify({ runs, total }, null, 2)}\n`);
    return 0;
  }
  if (total === 0) {
    ctx.io.out('No runs yet — start one with: agentbox scout "<question>"\n');
    return 0;
  }
  ctx.io.out(renderStatusTable(runs, total, new Date(), styler(ctx.io)));
  return 0;
}
