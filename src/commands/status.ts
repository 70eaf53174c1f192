import fs from 'node:fs';
import path from 'node:path';
import { formatUsd } from '../budget/format.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { groupDetail } from '../group/row-text.js';
import type { StatusRow } from '../group/status-rows.js';
// NOTE: the modules, not the ledger's index: `status` must not load the writing half of the ledger.
import { listRuns } from '../ledger/list.js';
import { type Ledger, openLedger } from '../ledger/paths.js';
import type { RunStatus } from '../ledger/types.js';
import { fitColumns, type Measure, measureFor, plainMeasure } from '../util/columns.js';
import { terminalJson } from '../util/json-out.js';
import { thousands } from '../util/number.js';
import { type Styler, styler } from '../util/style.js';
import { terminalLine } from '../util/terminal-text.js';

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

/** A time as agentbox writes it (toISOString): ordered as text as it is in time. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * formatAge for many runs: a time agentbox wrote more than 30 days before `now` is its date,
 * found by comparing text (most of 10,000 runs; parsing each costs `status --all` ~4 ms).
 */
export function ageFormatter(now: Date): (startedAt: string | null) => string {
  const monthAgo = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  return (startedAt) =>
    startedAt !== null && startedAt < monthAgo && ISO_TIME.test(startedAt)
      ? startedAt.slice(0, 10)
      : formatAge(startedAt, now);
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

const UNCLEAN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|^\s|\s$/;

/** Task text safe for a terminal (src/util/terminal-text.ts), one line. */
function cleanTask(task: string): string {
  // NOTE: tested first: a task the ledger wrote is clean already, and cleaning costs twice as much.
  return UNCLEAN.test(task) ? terminalLine(task.replace(/[\n\t]+/g, ' ').trim()) : task;
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

/** Cells of a column with few distinct values (type, status): each padded (and coloured) once. */
function cellCache(make: (text: string) => string): (text: string) => string {
  const cells = new Map<string, string>();
  return (text) => {
    let cell = cells.get(text);
    if (cell === undefined) {
      cell = make(text);
      cells.set(text, cell);
    }
    return cell;
  };
}

/** The cells that vary per run, column by column, and each column's width. */
/** The TYPE and TASK cells of a row: a group's are "group" and its counts before its task. */
function typeAndTask(run: StatusRow): [type: string, task: string] {
  if ('kind' in run) return ['group', `${groupDetail(run)} · ${cleanTask(run.task)}`];
  return [run.type ?? '?', run.problem && !run.status ? `(${run.problem})` : cleanTask(run.task)];
}

function tableCells(runs: readonly StatusRow[], now: Date, wide: boolean, measure: Measure) {
  const w = { run: wide ? 3 : 2, type: 4, status: 6, age: 3, cost: 4, where: 5 };
  const ageOf = ageFormatter(now);
  const ages: string[] = [];
  const costs: string[] = [];
  const types: string[] = [];
  const tasks: string[] = [];
  const wheres: string[] = [];
  const statuses: string[] = [];
  // A WHERE column only when some run ran elsewhere (agentbox fetch).
  let elsewhere = false;
  let claims = false;
  for (const run of runs) {
    // Run names, types, statuses and costs are agentbox's own ASCII: their width is their length.
    w.run = Math.max(w.run, (wide ? run.name : run.id).length);
    const [type, task] = typeAndTask(run);
    types.push(type);
    tasks.push(task);
    w.type = Math.max(w.type, type.length);
    // A fetched run's status and cost are its publication's claims: marked, and said below.
    const claimed = 'claimed_by' in run && typeof run.claimed_by === 'string';
    const mark = claimed ? CLAIM_MARK : '';
    claims ||= claimed;
    // A revised run (agentbox revise) says which revision it is on: `REVIEW r2`.
    const revision = 'revision' in run && run.revision ? ` r${run.revision}` : '';
    // MERGED or DISCARDED is unmarked only when decided here, not when the publication said it.
    const said = !DECIDED.has(run.status) || ('status_claimed' in run && run.status_claimed === true);
    const status = `${run.status ?? '?'}${revision}${claimed && said ? mark : ''}`;
    statuses.push(status);
    w.status = Math.max(w.status, status.length);
    const age = ageOf(run.started_at);
    ages.push(age);
    w.age = Math.max(w.age, measure(age));
    const cost = run.cost_usd === null ? '—' : `${formatUsd(run.cost_usd)}${mark}`;
    costs.push(cost);
    w.cost = Math.max(w.cost, cost.length);
    if (run.ran_on === null) {
      wheres.push('here');
      continue;
    }
    // Untrusted text from another machine's publication: cleaned and cut like a task.
    const where = cleanTask(run.ran_on).slice(0, WHERE_MAX) || '?';
    wheres.push(where);
    w.where = Math.max(w.where, measure(where));
    elsewhere = true;
  }
  return { w, ages, costs, types, tasks, wheres, statuses, elsewhere, claims };
}

/** The mark on a claimed status or cost, and the line that says what it means. */
const CLAIM_MARK = '*';
export const CLAIM_FOOTER =
  '* claimed by the publication of a run fetched from another machine, not checked here (agentbox show <id> says who published it)';
/** Statuses a decision here sets (or that end a run whoever set them): not marked as claims. */
const DECIDED: ReadonlySet<RunStatus | null> = new Set(['MERGED', 'DISCARDED']);

/**
 * The table `agentbox status` prints, newest first, with a footer when runs were left out. Pure.
 * Each run is named by its short id (what every command accepts) unless `wide`; in a terminal,
 * each row fits its width, the task cut to what is left. NOTE: built for `status --all` with
 * 10,000 rows in a process just started (code not yet optimised): one pass for the cells and
 * widths, one for the lines, and nothing per row that can be done once per column value.
 */
export function renderStatusTable(
  runs: readonly StatusRow[],
  total: number,
  now: Date,
  style: Styler,
  options: TableOptions = {},
): string {
  const wide = options.wide === true;
  const measure = options.measure ?? plainMeasure;
  const { w, ages, costs, types, tasks, wheres, statuses, elsewhere, claims } = tableCells(
    runs,
    now,
    wide,
    measure,
  );
  // Not a terminal: whole tasks, as `gh run list` and `git log` print to a pipe (one line each).
  const fixed = w.run + w.type + w.status + w.age + w.cost + 5 * 2 + (elsewhere ? w.where + 2 : 0);
  const taskWidth =
    wide || !options.columns ? Number.POSITIVE_INFINITY : Math.max(MIN_TASK, options.columns - fixed);
  // Each cell with the two spaces after it, made once per distinct text.
  const typeCell = cellCache((type) => `${type.padEnd(w.type)}  `);
  const statusCell = cellCache((text) => {
    const status = (text.endsWith(CLAIM_MARK) ? text.slice(0, -CLAIM_MARK.length) : text).split(' ')[0]!;
    return `${colourStatus(status === '?' ? null : (status as RunStatus), style)(text.padEnd(w.status))}  `;
  });
  const ageCell = cellCache((age) => `${age.padStart(w.age)}  `);
  const costCell = cellCache((cost) => `${cost.padStart(w.cost)}  `);
  const whereCell = cellCache((text) => (elsewhere ? `${text.padEnd(w.where)}  ` : ''));
  const lines = [
    style.dim(
      `${(wide ? 'RUN' : 'ID').padEnd(w.run)}  ${typeCell('TYPE')}${'STATUS'.padEnd(w.status)}  ${ageCell('AGE')}${costCell('COST')}${whereCell('WHERE')}TASK`,
    ),
  ];
  const cut = taskWidth !== Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    const task = cut ? fitColumns(tasks[i]!, taskWidth, measure) : tasks[i]!;
    const line = `${(wide ? run.name : run.id).padEnd(w.run)}  ${typeCell(types[i]!)}${statusCell(statuses[i]!)}${ageCell(ages[i]!)}${costCell(costs[i]!)}${whereCell(wheres[i]!)}${task}`;
    lines.push(task ? line : line.trimEnd());
  }
  if (claims) lines.push(style.dim(CLAIM_FOOTER));
  const hidden = total - runs.length;
  if (hidden > 0) lines.push(style.dim(`… ${thousands(hidden)} more — agentbox status --all`));
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

/**
 * The texts the table measures: where each fetched run ran, and the tasks when it cuts them to the
 * terminal (names, types, statuses and costs are ASCII). A generator: 10,000 runs with --all.
 */
function* measuredTexts(runs: readonly StatusRow[], cut: boolean): Generator<string> {
  for (const run of runs) {
    if (cut) {
      yield 'kind' in run ? typeAndTask(run)[1] : run.task;
      if (run.problem !== null) yield run.problem;
    }
    if (run.ran_on !== null) yield run.ran_on;
  }
}

/**
 * The rows: the runs, and with groups (`fix --attempts N`) one row per group instead of its
 * attempts. NOTE: the groups' code is loaded only when the ledger has a groups/ folder (as
 * src/group/store.ts names it): `status` without groups loads and reads what it always has.
 */
async function listRows(ledger: Ledger, limit: number | undefined) {
  if (!fs.existsSync(path.join(ledger.dir, 'groups'))) {
    const { runs, total } = listRuns(ledger, { limit });
    return { runs: runs as StatusRow[], total };
  }
  const { rows, total } = (await import('../group/status-rows.js')).listStatusRows(ledger, { limit });
  return { runs: rows, total };
}

/** `agentbox status`: the runs of this repository, newest first; a group is one row. */
export async function status(ctx: CommandContext, opts: StatusOptions = {}): Promise<number> {
  // Checked even with --all: a typo should not pass silently.
  const parsed = parseLimit(opts.limit ?? '20');
  const limit = opts.all ? undefined : parsed;
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const { runs, total } = await listRows(ledger, limit);
  if (opts.json) {
    ctx.io.out(`${terminalJson({ runs, total }, 2)}\n`);
    return 0;
  }
  if (total === 0) {
    ctx.io.out('No runs yet — start one with: agentbox scout "<question>"\n');
    return 0;
  }
  const columns = terminalColumns(ctx.env, ctx.io);
  const wide = opts.wide === true;
  const measure = await measureFor(measuredTexts(runs, !wide && columns !== null));
  ctx.io.out(renderStatusTable(runs, total, new Date(), styler(ctx.io), { columns, wide, measure }));
  return 0;
}
