import { describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/budget/format.js';
import {
  ageFormatter,
  colourStatus,
  formatAge,
  renderStatusTable,
  type TableOptions,
} from '../../src/commands/status.js';
import { memoryIo } from '../../src/context.js';
import type { RunSummary } from '../../src/ledger/list.js';
import { RUN_STATUSES, RUN_TYPES } from '../../src/ledger/types.js';
import { fitColumns, measureFor, plainMeasure } from '../../src/util/columns.js';
import { thousands } from '../../src/util/number.js';
import { type Styler, styler } from '../../src/util/style.js';
import { terminalLine } from '../../src/util/terminal-text.js';

/*
 * renderStatusTable was rewritten for speed (one pass for cells and widths, no spread of 10,000
 * arguments). The table it replaced, verbatim, is the reference: every output must be the same bytes.
 */

const WHERE_MAX = 16;
const MIN_TASK = 12;
/** Issue 27: the one sanitiser (escape sequences removed, other controls shown), on one line. */
function cleanTask(task: string): string {
  return terminalLine(task.replace(/[\n\t]+/g, ' ').trim());
}

// biome-ignore format: a verbatim copy
function referenceTable(
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

const NOW = new Date('2026-11-24T12:00:00Z');
const TASKS = [
  'make the login faster by caching the session lookup in the middleware layer',
  'Révise la façade du cache — et plus…',
  '日本語のタスク: ログインを速くする',
  'emoji 🚀🚀🚀 and text',
  '',
  'tabs\tand\u001b[31m escapes \u0007 ',
  '   ',
  'short',
];
const STARTS = [
  null,
  'not a date',
  '2026-11-24T11:59:30Z',
  '2026-11-24T09:00:00Z',
  '2026-10-01T00:00:00Z',
  '2024-02-29T12:00:00Z',
  // As agentbox writes them (toISOString): older than 30 days, just inside, an offset, a look-alike.
  '2025-01-06T10:00:00.000Z',
  '2026-10-25T12:00:00.001Z',
  '2026-10-25T12:00:00.000Z',
  '2026-10-25T11:59:59.999Z',
  '2025-01-06T10:00:00.000+02:00',
  '2025-01-06X10:00:00.000Z',
];
const COSTS = [null, 0, 0.00004, 0.1234, 0.5, 1.75, 1234.56];
const WHERE = [null, 'ci-runner-7\u001b[31m-with-a-very-long-name', 'laptop', '\u0001\u0002', 'ホスト'];

/** A varied set of rows: every column's cases cycled with different periods, so they combine. */
function fixture(count: number, elsewhere: boolean): RunSummary[] {
  return Array.from({ length: count }, (_, i) => {
    const id = (0xa00000 + i).toString(16);
    const damaged = i % 11 === 5;
    return {
      name: `26-11-24_${String(1000 + (i % 60)).slice(-4)}__${'slug-'.repeat(i % 4)}task__${id}`,
      id,
      type: damaged ? null : RUN_TYPES[i % RUN_TYPES.length]!,
      status: damaged ? null : RUN_STATUSES[i % RUN_STATUSES.length]!,
      task: TASKS[i % TASKS.length]!,
      started_at: STARTS[i % STARTS.length]!,
      ended_at: null,
      failure_kind: null,
      cost_usd: COSTS[i % COSTS.length]!,
      tool_calls: i,
      problem: damaged || i % 13 === 0 ? `no state.json (${i})` : null,
      ran_on: elsewhere ? WHERE[i % WHERE.length]! : null,
    };
  });
}

describe('ageFormatter', () => {
  it('says what formatAge says, for every kind of time around the 30-day line', () => {
    const monthAgo = NOW.getTime() - 30 * 86_400_000;
    const times = [
      ...STARTS,
      ...[-2, -1, 0, 1, 2, 1000, -86_400_000].map((d) => new Date(monthAgo + d).toISOString()),
      new Date(NOW.getTime() - 5000).toISOString(),
      '1999-12-31T23:59:59.999Z',
      '',
    ];
    const ageOf = ageFormatter(NOW);
    for (const time of times) expect([time, ageOf(time)]).toEqual([time, formatAge(time, NOW)]);
  });
});

describe('renderStatusTable', () => {
  const colours = styler({ ...memoryIo(), color: true });
  const plain = styler({ ...memoryIo(), color: false });
  it.each([
    [null, false, false, false],
    [80, false, false, false],
    [80, false, true, true],
    [40, false, true, false],
    [200, true, true, true],
    [null, true, false, true],
    [60, false, false, true],
  ])(
    'prints the bytes the table it replaced printed (columns %s, wide %s, elsewhere %s, colour %s)',
    async (columns, wide, elsewhere, colour) => {
      const runs = fixture(150, elsewhere);
      const measure = await measureFor(
        runs.flatMap((r) => [r.name, r.task, r.problem ?? '', r.ran_on ?? '']),
      );
      const options: TableOptions = { columns, wide, measure };
      const style = colour ? colours : plain;
      for (const total of [runs.length, runs.length + 1234]) {
        const expected = referenceTable(runs, total, NOW, style, options);
        expect(renderStatusTable(runs, total, NOW, style, options)).toBe(expected);
      }
    },
  );

  it('prints the same bytes for no rows and for one', () => {
    for (const runs of [[], fixture(1, false), fixture(1, true)]) {
      expect(renderStatusTable(runs, 3, NOW, plain)).toBe(referenceTable(runs, 3, NOW, plain));
    }
  });
});
