import { formatUsd } from '../budget/format.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
// NOTE: the modules, not the ledger's index: `status` must not load the writing half of the ledger.
import { listRuns, type RunSummary } from '../ledger/list.js';
import { openLedger } from '../ledger/paths.js';
import type { RunStatus } from '../ledger/types.js';
import { fitColumns, type Measure, measureFor, plainMeasure } from '../util/columns.js';
import { thousands } from '../util/number.js';
import { type Styler, styler } from '../util/style.js';

export interface StatusOptions {
  readonly json?: boolean;
  readonly all?: boolean;
  /** As typed after -n/--limit; commander passes the text. */
  readonly limit?: string;
  /** Full run names, the task uncut by the terminal's width. */
  readonly wide?: boolean;
}

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

/** Task text safe for a terminal: no control characters (escape sequences), one line. */
function cleanTask(task: string): string {
  return task.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

export interface TableOptions {
  /** The terminal's width: rows are cut to fit it (the task only). null: not a terminal, nothing is cut. */
  readonly columns?: number | null;
  /** The full run name instead of its short id. */
  readonly wide?: boolean;
  /** How wide a text is: from measureFor() over the rows' texts (the default: plain text only). */
  readonly measure?: Measure;
}

/** The widest a machine's name is shown in the WHERE column. */
const WHERE_MAX = 16;

/** The narrowest the task column gets before the row is left to wrap. */
const MIN_TASK = 12;

/**
 * The table `agentbox status` prints, newest first, with a footer when runs were left out. Pure.
 * Each run is named by its short id (what every command accepts) unless `wide`; in a terminal,
 * each row fits its width, the task cut to what is left.
 */
export function renderStatusTable(
  runs: readonly RunSummary[],
  total: number,
  now: Date,
  style: Styler,
  options: TableOptions = {},
): string {
  const rows = runs.map((run) => ({
    run: options.wide ? run.name : run.id,
    type: run.type ?? '?',
    status: run.status ?? '?',
    colour: colourStatus(run.status, style),
    age: formatAge(run.started_at, now),
    cost: run.cost_usd === null ? '—' : formatUsd(run.cost_usd),
    task: run.problem && !run.status ? `(${run.problem})` : cleanTask(run.task),
    // Untrusted text from another machine's publication: cleaned and cut like a task.
    where: run.ran_on === null ? 'here' : cleanTask(run.ran_on).slice(0, WHERE_MAX) || '?',
  }));
  // A WHERE column only when some run ran elsewhere (agentbox fetch).
  const elsewhere = runs.some((run) => run.ran_on !== null);
  const title = options.wide ? 'RUN' : 'ID';
  const measure = options.measure ?? plainMeasure;
  const width = (key: 'run' | 'type' | 'status' | 'age' | 'cost' | 'where', head: string) =>
    Math.max(head.length, ...rows.map((row) => measure(row[key])));
  const w = { run: width('run', title), type: width('type', 'TYPE'), status: width('status', 'STATUS') };
  const age = width('age', 'AGE');
  const cost = width('cost', 'COST');
  const where = elsewhere ? width('where', 'WHERE') : 0;
  const whereCell = (text: string) => (elsewhere ? `${text.padEnd(where)}  ` : '');
  const fixed = w.run + w.type + w.status + age + cost + 5 * 2 + (elsewhere ? where + 2 : 0);
  // Not a terminal: whole tasks, as `gh run list` and `git log` print to a pipe (one line each).
  const taskWidth =
    options.wide || !options.columns ? Number.POSITIVE_INFINITY : Math.max(MIN_TASK, options.columns - fixed);
  const lines = [
    style.dim(
      `${title.padEnd(w.run)}  ${'TYPE'.padEnd(w.type)}  ${'STATUS'.padEnd(w.status)}  ${'AGE'.padStart(age)}  ${'COST'.padStart(cost)}  ${whereCell('WHERE')}TASK`,
    ),
  ];
  for (const row of rows) {
    const status = row.colour(row.status.padEnd(w.status));
    lines.push(
      `${row.run.padEnd(w.run)}  ${row.type.padEnd(w.type)}  ${status}  ${row.age.padStart(age)}  ${row.cost.padStart(cost)}  ${whereCell(row.where)}${fitColumns(row.task, taskWidth, measure)}`.trimEnd(),
    );
  }
  const hidden = total - runs.length;
  if (hidden > 0) {
    lines.push(style.dim(`… ${thousands(hidden)} more — agentbox status --all`));
  }
  return `${lines.join('\n')}\n`;
}

/** The width to fit: `$COLUMNS` when set, else the terminal's; null when output is not a terminal. */
export function terminalColumns(
  env: Readonly<Record<string, string | undefined>>,
  io: { isTTY: boolean; columns?: number },
): number | null {
  const fromEnv = Number(env.COLUMNS);
  if (env.COLUMNS && Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return io.isTTY && io.columns ? io.columns : null;
}

/** `agentbox status`: the runs of this repository, newest first. */
export async function status(ctx: CommandContext, opts: StatusOptions = {}): Promise<number> {
  // Checked even with --all: a typo should not pass silently.
  const parsed = parseLimit(opts.limit ?? '20');
  const limit = opts.all ? undefined : parsed;
  const repo = await findRepo(ctx.cwd, ctx.env);
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
  const measure = await measureFor(
    runs.flatMap((run) => [run.name, run.task, run.problem ?? '', run.ran_on ?? '']),
  );
  ctx.io.out(
    renderStatusTable(runs, total, new Date(), styler(ctx.io), {
      columns: terminalColumns(ctx.env, ctx.io),
      wide: opts.wide === true,
      measure,
    }),
  );
  return 0;
}
