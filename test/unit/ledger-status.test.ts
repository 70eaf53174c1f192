import fs from 'node:fs';
import path from 'node:path';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { NO_SPEND } from '../../src/budget/spend.js';
import { formatAge, renderStatusTable, status, terminalColumns } from '../../src/commands/status.js';
import { isAgentboxError } from '../../src/errors.js';
import { updateState } from '../../src/ledger/index.js';
import { fitColumns, isPlain, measureFor, PLAIN_RANGES } from '../../src/util/columns.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { cli, context, create, errorOf, ledgerRepo, scratchDir, threeRuns } from './fixtures/ledger.js';

describe('agentbox status', () => {
  it('prints a table, newest first; piped, whole tasks (as gh and git print to a pipe)', async () => {
    const { repo, scout, fix, plan } = await threeRuns();
    const { ctx, io } = context(repo.dir);
    expect(await status(ctx, { limit: '20' })).toBe(0);
    const [header, ...rows] = io.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+TYPE\s+STATUS\s+AGE\s+COST\s+TASK$/);
    expect(rows.map((r) => r.split(/\s{2,}/).filter((_, i) => i !== 3))).toEqual([
      [plan.name.slice(-6), 'plan', 'ACTIVE', '—', 'plan the queue'],
      // The escape sequence is gone whole: a task cannot colour (or retitle) the terminal, and no
      // `[31m` is left of it in the column (show removes it whole too).
      [fix.name.slice(-6), 'fix', 'CRASHED', '—', `fix it ${'very '.repeat(20)}long`],
      [scout.name.slice(-6), 'scout', 'DONE', '—', 'why is db latency high?'],
    ]);
    expect(io.stdout).not.toContain('\u001b');
    expect(io.stderr).toBe('');
  });

  it('--json prints { runs, total } with stable fields', async () => {
    const { repo, fix } = await threeRuns();
    const { ctx, io } = context(repo.dir);
    await status(ctx, { json: true, limit: '2' });
    const out = JSON.parse(io.stdout);
    expect(Object.keys(out)).toEqual(['runs', 'total']);
    expect(out.total).toBe(3);
    expect(out.runs).toHaveLength(2);
    expect(out.runs[1]).toEqual({
      name: fix.name,
      id: 'bbbbbb',
      type: 'fix',
      status: 'CRASHED',
      task: fix.state.summary?.task,
      started_at: '2025-11-22T10:00:00.000Z',
      ended_at: expect.stringMatching(/^\d{4}-/),
      failure_kind: 'timeout',
      cost_usd: null,
      tool_calls: 0,
      problem: null,
      ran_on: null,
      claimed_by: null,
    });
  });

  it('shows what each run cost, agent and supervisor together, also from INDEX.jsonl (--all)', async () => {
    const { repo, ledger, fix } = await threeRuns();
    const spend = (cost_usd: number) => ({ ...NO_SPEND, cost_usd });
    await updateState(
      ledger,
      fix.name,
      { usage: { agent: spend(1.5), supervisor: spend(0.25) } },
      { event: 'x' },
    );
    for (const args of [['status'], ['status', '--all']]) {
      const out = (await cli(repo.dir, args)).stdout;
      const row = out.split('\n').find((line) => line.startsWith(fix.name.slice(-6)));
      expect(row?.split(/\s{2,}/)[4]).toBe('$1.75');
      expect(JSON.parse((await cli(repo.dir, [...args, '--json'])).stdout).runs[1].cost_usd).toBe(1.75);
    }
  });

  it('limits to 20 with a footer; --all lists every run', async () => {
    const { repo, ledger } = ledgerRepo();
    for (let i = 0; i < 23; i++)
      await create(ledger, `run ${i}`, `2025-11-22T10:${String(i).padStart(2, '0')}:00Z`);
    const def = await cli(repo.dir, ['status']);
    const rows = def.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(1 + 20 + 1);
    expect(rows[1]).toContain('run 22');
    expect(rows.at(-1)).toBe('… 3 more — agentbox status --all');
    const all = await cli(repo.dir, ['status', '--all']);
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(1 + 23);
    expect(all.stdout).not.toContain('more —');
    expect((await cli(repo.dir, ['status', '-n', '2'])).stdout).toContain('… 21 more');
    expect(JSON.parse((await cli(repo.dir, ['status', '--json', '--all'])).stdout).runs).toHaveLength(23);
  });

  it('with no runs, says how to start one', async () => {
    const { repo } = ledgerRepo();
    expect(await cli(repo.dir, ['status'])).toEqual({
      code: 0,
      stdout: 'No runs yet — start one with: agentbox scout "<question>"\n',
      stderr: '',
    });
  });

  it.each(['0', '-1', 'abc', '1.5', '', ' ', '1e3', '99999999999'])(
    'refuses --limit %j as USAGE and changes nothing',
    async (limit) => {
      const { repo } = await threeRuns();
      const before = snapshotTree(repo.dir);
      const { ctx } = context(repo.dir);
      const error = await errorOf(() => status(ctx, { limit }));
      expect(isAgentboxError(error) && error.code).toBe('USAGE');
      expect((error as Error).message).toBe(
        `invalid --limit ${JSON.stringify(limit)}: expected a positive whole number`,
      );
      expect(snapshotTree(repo.dir)).toEqual(before);
    },
  );

  it('exits 2 on a bad --limit through the CLI', async () => {
    const { repo } = ledgerRepo();
    const result = await cli(repo.dir, ['status', '--limit', 'ten']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('agentbox: invalid --limit "ten": expected a positive whole number');
  });

  it('says NOT_INITIALIZED outside a set-up repo and NOT_A_GIT_REPO outside git, writing nothing', async () => {
    const { repo } = ledgerRepo();
    fs.rmSync(path.join(repo.dir, '.agents'), { recursive: true });
    const before = snapshotTree(repo.dir);
    const result = await cli(repo.dir, ['status']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`agentbox is not set up in ${repo.dir} — run "agentbox init"\n`);
    expect(snapshotTree(repo.dir)).toEqual(before);
    const bare = scratchDir();
    expect((await cli(bare, ['status'])).stderr).toContain(`not a git repository: ${bare}`);
    expect(fs.readdirSync(bare)).toEqual([]);
  });

  it.each([
    [0, '0s'],
    [59_000, '59s'],
    [60_000, '1m'],
    [3_599_000, '59m'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [29 * 86_400_000, '29d'],
    [31 * 86_400_000, '2025-11-22'],
    [-5000, '0s'],
  ])('AGE of a run started %i ms ago is %s', (ago, expected) => {
    const started = new Date('2025-11-22T10:00:00Z');
    expect(formatAge(started.toISOString(), new Date(started.getTime() + ago))).toBe(expected);
  });
});

describe('status fits the terminal', () => {
  const NOW = new Date('2026-11-24T12:00:00Z');
  const run = (i: number, task: string) => ({
    name: `26-11-24_11${String(i).padStart(2, '0')}__${'a-long-slug-of-a-task-'.repeat(2)}__${String(i).padStart(6, 'c')}`,
    id: String(i).padStart(6, 'c'),
    type: 'fix' as const,
    status: 'REVIEW' as const,
    task,
    started_at: '2026-11-24T11:00:00Z',
    ended_at: null,
    failure_kind: null,
    cost_usd: 0.1234,
    tool_calls: 7,
    problem: null,
    ran_on: null as string | null,
  });
  const RUNS = [
    run(1, 'make the login faster by caching the session lookup in the middleware layer'),
    run(2, '日本語のタスク: ログインを速くする、セッションのキャッシュを使って、ミドルウェアで'),
    run(3, 'emoji 🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀 and more text after it'),
    run(4, 'short'),
  ];
  const plain = {
    bold: (t: string) => t,
    dim: (t: string) => t,
    ok: (t: string) => t,
    warn: (t: string) => t,
    bad: (t: string) => t,
    cyan: (t: string) => t,
  } as never;

  it.each([80, 60, 120])('at %i columns no row is wider, wide characters counted as two', async (columns) => {
    const measure = await measureFor(RUNS.map((r) => r.task));
    const lines = renderStatusTable(RUNS, 4, NOW, plain, { columns, measure }).trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
    expect(lines[0]).toMatch(/^ID\s+TYPE/);
    expect(lines[1]).toMatch(/^ccccc1 {2}fix/);
    if (columns <= 80) expect(lines[1]).toMatch(/…$/);
    expect(lines[4]).toMatch(/ {2}short$/);
  });

  it('the widest other columns (interactive, DISCARDED, a date, $1234.56) still leave the task room at 80', async () => {
    const widest = {
      ...run(5, 'a task long enough to be cut at eighty columns, with 日本語 and 🚀 in it too'),
      type: 'interactive' as const,
      status: 'DISCARDED' as const,
      started_at: '2026-09-01T11:00:00Z',
      cost_usd: 1234.56,
    };
    const measure = await measureFor([widest, ...RUNS].map((r) => r.task));
    const lines = renderStatusTable([widest, ...RUNS], 5, NOW, plain, { columns: 80, measure })
      .trimEnd()
      .split('\n');
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(
      /^ccccc5 {2}interactive {2}DISCARDED {2}2026-09-01 {2}\$1234\.56 {2}a task long .*…$/,
    );
  });

  it('runs fetched from elsewhere get a WHERE column (their machine, cleaned and cut); local runs say here', () => {
    const fetched = { ...run(5, 'fixed on a runner'), ran_on: 'ci-runner-7\u001b[31m-with-a-very-long-name' };
    const lines = renderStatusTable([fetched, ...RUNS.slice(3)], 2, NOW, plain, { columns: 80 })
      .trimEnd()
      .split('\n');
    expect(lines[0]).toMatch(/ {2}COST {2}WHERE {13}TASK$/);
    expect(lines[1]).toMatch(/ {2}ci-runner-7-with {2}fixed on a runner$/);
    expect(lines[2]).toMatch(/ {2}here {14}short$/);
    expect(lines.join('\n')).not.toContain('\u001b');
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(80);
    const local = renderStatusTable(RUNS.slice(3), 1, NOW, plain, { columns: 80 });
    expect(local).not.toContain('WHERE');
  });

  it('not a terminal (no width): nothing is cut', () => {
    const lines = renderStatusTable(RUNS, 4, NOW, plain, { columns: null }).trimEnd().split('\n');
    expect(lines[1]).toMatch(/^ccccc1 {2}fix .* in the middleware layer$/);
    expect(lines[3]).toMatch(/ and more text after it$/);
    expect(lines.join('\n')).not.toContain('…');
  });

  it('--wide: full run names and the task uncut by the terminal', () => {
    const lines = renderStatusTable(RUNS, 4, NOW, plain, { columns: 80, wide: true }).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+TYPE/);
    expect(lines[1]!.startsWith(RUNS[0]!.name)).toBe(true);
    expect(lines[1]).toContain('in the middleware layer');
  });

  it.each([
    ['abcdef', 6, 'abcdef'],
    ['abcdefg', 6, 'abcde…'],
    ['日本語です', 6, '日本…'],
    ['a🚀b', 3, 'a…'],
    ['👩‍👩‍👧 family', 4, '👩‍👩‍👧…'],
  ])('fitColumns(%j, %i) is %j', async (text, width, expected) => {
    const measure = await measureFor([text]);
    expect(fitColumns(text, width, measure)).toBe(expected);
    expect(stringWidth(fitColumns(text, width, measure))).toBeLessThanOrEqual(width);
  });

  it.each([
    ['plain ascii — and … too', true],
    ['Révise la façade du cache', true],
    ['日本語', false],
    ['a\u0007bell', false],
    ['tab\there', false],
  ])('isPlain(%j) is %s, and the measure agrees with string-width', async (text, plainText) => {
    expect(isPlain(text)).toBe(plainText);
    const measure = await measureFor([text]);
    if (plainText) expect(measure(text)).toBe(stringWidth(text));
  });

  it('every character the plain measure counts as one column, string-width counts as one too', () => {
    for (const [from, to] of PLAIN_RANGES) {
      for (let code = from; code <= to; code++) {
        const char = String.fromCodePoint(code);
        expect(isPlain(char), char).toBe(true);
        expect(stringWidth(char), `U+${code.toString(16)}`).toBe(1);
      }
    }
    for (const other of ['\u00a9', '\u00ad', '\u00ae']) expect(isPlain(other), other).toBe(false);
    expect(isPlain('e\u0301')).toBe(false);
  });

  it('the plain measure refuses text it was not shown (a bug, not a wrong width)', () => {
    const lines = () => renderStatusTable([run(9, '日本語')], 1, NOW, plain, { columns: 80 });
    expect(lines).toThrow(/measureFor\(\) was not shown/);
  });

  it('$COLUMNS wins; not a terminal: no width', () => {
    expect(terminalColumns({ COLUMNS: '72' }, { isTTY: false })).toBe(72);
    expect(terminalColumns({}, { isTTY: true, columns: 90 })).toBe(90);
    expect(terminalColumns({}, { isTTY: false, columns: 90 })).toBeNull();
    expect(terminalColumns({ COLUMNS: 'wide' }, { isTTY: true, columns: 90 })).toBe(90);
  });
});
