import { isAscii } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { asciiJson, readCache, writeCache } from '../../src/ledger/cache.js';
import { readFoldedIndex } from '../../src/ledger/fold-cache.js';
import { type Ledger, listRunNames, listRuns, updateState } from '../../src/ledger/index.js';
import { foldIndex, readIndexLog } from '../../src/ledger/index-log.js';
import { isRunName } from '../../src/ledger/names.js';
import { makeReadOnly } from '../helpers/read-only.js';
import { create, idSequence, ledgerRepo, threeRuns } from './fixtures/ledger.js';

/*
 * The caches in .agents/cache/ against what they stand for: every read must equal folding the
 * whole INDEX.jsonl (or listing runs/) from scratch, whatever happened to the log or the cache.
 * A test that needs to know the cache was used edits a task inside it: only a read that trusted
 * the cache can show the edit.
 */

const foldCache = (ledger: Ledger) => path.join(ledger.dir, 'cache', 'index-fold.json');

/** By name: the cache keeps runs in listing order, the log's fold in the order they first appear. */
const byName = <T>(runs: Map<string, T>) => [...runs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
/** What the cache stands for: the whole log folded from scratch. */
const reference = (ledger: Ledger) => byName(foldIndex(readIndexLog(ledger).events));
const cached = (ledger: Ledger) => byName(readFoldedIndex(ledger).runs);

/** Rewrites the cached task of `run` (a valid cache still): a read that shows it used the cache. */
function markCachedTask(ledger: Ledger, run: string, task: string): void {
  const cache = JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8'));
  const i = cache.runs.name.indexOf(run);
  expect(i).toBeGreaterThanOrEqual(0);
  cache.runs.task[i] = task;
  fs.writeFileSync(foldCache(ledger), JSON.stringify(cache));
}

const taskOf = (ledger: Ledger, run: string) => readFoldedIndex(ledger).runs.get(run)?.task;

describe('the cached fold of INDEX.jsonl', () => {
  it('equals the whole fold, is written by the first reader and used by the next', async () => {
    const { ledger, fix } = await threeRuns();
    fs.rmSync(path.join(ledger.dir, 'cache'), { recursive: true, force: true });
    expect(cached(ledger)).toEqual(reference(ledger));
    const cache = JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8'));
    expect(cache).toMatchObject({ v: 4, offset: fs.statSync(ledger.indexJsonl).size });
    markCachedTask(ledger, fix.name, 'from the cache');
    expect(taskOf(ledger, fix.name)).toBe('from the cache');
  });

  it('keeps any text: written as ASCII (read faster), read back as UTF-8 after a hand edit', async () => {
    const { ledger, fix } = await threeRuns();
    const task = 'Révise la façade — 日本語 🚀 \\ "quoted"';
    await create(ledger, task, '2025-11-22T12:00:00Z', { ids: idSequence('dddddd') });
    fs.rmSync(path.join(ledger.dir, 'cache'), { recursive: true });
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(isAscii(fs.readFileSync(foldCache(ledger)))).toBe(true);
    expect(cached(ledger)).toEqual(reference(ledger));
    expect([...readFoldedIndex(ledger).runs.values()].map((run) => run.task)).toContain(task);
    markCachedTask(ledger, fix.name, task);
    expect(isAscii(fs.readFileSync(foldCache(ledger)))).toBe(false);
    expect(taskOf(ledger, fix.name)).toBe(task);
  });

  it('folds only what was appended, on top of the cache', async () => {
    const { ledger, fix, scout } = await threeRuns();
    markCachedTask(ledger, fix.name, 'from the cache');
    await updateState(ledger, scout, { status: 'ABORTED', failure: { kind: 'killed', message: 'stop' } });
    const runs = readFoldedIndex(ledger).runs;
    expect(runs.get(fix.name)?.task).toBe('from the cache');
    expect(runs.get(scout.name)).toMatchObject({ status: 'ABORTED', failure_kind: 'killed' });
    const cache = JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8'));
    expect(cache.offset).toBe(fs.statSync(ledger.indexJsonl).size);
  });

  it('folds the whole log again when its end was rewritten in place with the same size', async () => {
    const { ledger, fix } = await threeRuns();
    markCachedTask(ledger, fix.name, 'from the cache');
    const log = fs.readFileSync(ledger.indexJsonl, 'utf8');
    // The last line (the fix's crash), edited by hand: the bytes the cache keeps no longer match.
    // NOTE: an edit further back than those 256 bytes goes unseen; after one, delete .agents/cache.
    const last = log.lastIndexOf('\n', log.length - 2);
    const rewritten = `${log.slice(0, last)}${log.slice(last).replace('"timeout"', '"stalled"')}`;
    expect(rewritten).not.toBe(log);
    expect(rewritten.length).toBe(log.length);
    const ino = fs.statSync(ledger.indexJsonl).ino;
    fs.writeFileSync(ledger.indexJsonl, rewritten);
    expect(fs.statSync(ledger.indexJsonl).ino).toBe(ino);
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(readFoldedIndex(ledger).runs.get(fix.name)).toMatchObject({ failure_kind: 'stalled' });
    expect(taskOf(ledger, fix.name)).not.toBe('from the cache');
  });

  it('folds the whole log again when it was truncated, or replaced by another file', async () => {
    const { ledger, fix } = await threeRuns();
    const log = fs.readFileSync(ledger.indexJsonl, 'utf8');
    markCachedTask(ledger, fix.name, 'from the cache');
    fs.truncateSync(ledger.indexJsonl, log.indexOf('\n') + 1);
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(cached(ledger)).toHaveLength(1);
    // The same bytes, a new file (a restore, a rename over it): a new identity.
    fs.writeFileSync(ledger.indexJsonl, log);
    expect(cached(ledger)).toEqual(reference(ledger));
    markCachedTask(ledger, fix.name, 'from the cache');
    fs.writeFileSync(`${ledger.indexJsonl}.new`, log);
    fs.renameSync(`${ledger.indexJsonl}.new`, ledger.indexJsonl);
    expect(taskOf(ledger, fix.name)).not.toBe('from the cache');
    expect(cached(ledger)).toEqual(reference(ledger));
  });

  it('folds a torn last line for this reader only, and reads it again once it is whole', async () => {
    const { ledger, scout } = await threeRuns();
    const lines = fs.readFileSync(ledger.indexJsonl, 'utf8').trimEnd().split('\n');
    const event = { ...JSON.parse(lines.at(-1)!), run: scout.name, status: 'MERGED', task: 'torn' };
    const line = JSON.stringify(event);
    fs.appendFileSync(ledger.indexJsonl, line.slice(0, 40));
    const size = fs.statSync(ledger.indexJsonl).size;
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8')).offset).toBe(size - 40);
    fs.appendFileSync(ledger.indexJsonl, `${line.slice(40)}`);
    // Whole but not ended yet: this reader sees it; the cache still stops before it.
    expect(taskOf(ledger, scout.name)).toBe('torn');
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8')).offset).toBe(size - 40);
    fs.appendFileSync(ledger.indexJsonl, '\n');
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8')).offset).toBe(
      fs.statSync(ledger.indexJsonl).size,
    );
  });

  it('drops a run a deleted event names, from the cache as from the whole log', async () => {
    const { ledger, fix } = await threeRuns();
    expect(readFoldedIndex(ledger).runs.has(fix.name)).toBe(true);
    const last = fs.readFileSync(ledger.indexJsonl, 'utf8').trimEnd().split('\n').at(-1)!;
    fs.appendFileSync(ledger.indexJsonl, `${JSON.stringify({ ...JSON.parse(last), event: 'deleted' })}\n`);
    expect(readFoldedIndex(ledger).runs.has(fix.name)).toBe(false);
    expect(cached(ledger)).toEqual(reference(ledger));
    fs.rmSync(foldCache(ledger));
    expect(cached(ledger)).toEqual(reference(ledger));
  });

  type Columns = Record<'status' | 'task' | 'cost_usd' | 'ran_on', unknown[]>;
  type Cache = { runs: Columns; [key: string]: unknown };
  const edits: Array<[string, (cache: Cache) => unknown]> = [
    ['garbage', () => '\u0000{not json'],
    ['another version', (c) => ({ ...c, v: 1 })],
    ['a foreign file', () => [1, 2, 3]],
    ['no columns', (c) => ({ ...c, runs: null })],
    [
      'a status it does not know',
      (c) => ({ ...c, runs: { ...c.runs, status: c.runs.status.map(() => 'NOPE') } }),
    ],
    ['a number for a task', (c) => ({ ...c, runs: { ...c.runs, task: c.runs.task.map(() => 7) } })],
    ['text for a cost', (c) => ({ ...c, runs: { ...c.runs, cost_usd: c.runs.cost_usd.map(() => '$1') } })],
    ['a short column', (c) => ({ ...c, runs: { ...c.runs, ran_on: c.runs.ran_on.slice(1) } })],
    ['an offset past the end', (c) => ({ ...c, offset: 1e9 })],
    ['a tail of the wrong length', (c) => ({ ...c, tail: 'AAAA' })],
  ];
  it.each(edits)('reads a cache holding %s as none', async (_, edit) => {
    const { ledger, fix } = await threeRuns();
    markCachedTask(ledger, fix.name, 'from the cache');
    const edited = edit(JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8')));
    fs.writeFileSync(foldCache(ledger), typeof edited === 'string' ? edited : JSON.stringify(edited));
    expect(cached(ledger)).toEqual(reference(ledger));
    expect(taskOf(ledger, fix.name)).not.toBe('from the cache');
  });

  it('still reads right when the cache cannot be written, and never leaves half a file', async () => {
    const { ledger, scout, fix } = await threeRuns();
    const dir = path.join(ledger.dir, 'cache');
    const before = fs.readFileSync(foldCache(ledger));
    const undo = makeReadOnly(dir);
    try {
      await updateState(ledger, scout, { status: 'ABORTED', failure: { kind: 'killed', message: 'stop' } });
      expect(cached(ledger)).toEqual(reference(ledger));
      expect(readFoldedIndex(ledger).runs.get(scout.name)?.status).toBe('ABORTED');
      expect(listRuns(ledger).runs.find((r) => r.name === fix.name)?.status).toBe('CRASHED');
    } finally {
      undo();
    }
    expect(fs.readFileSync(foldCache(ledger))).toEqual(before);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('lists --all the same objects, keys in the order status --json prints, with and without a cache', async () => {
    const { ledger } = await threeRuns();
    const withCache = JSON.stringify(listRuns(ledger).runs);
    fs.rmSync(path.join(ledger.dir, 'cache'), { recursive: true });
    const without = JSON.stringify(listRuns(ledger).runs);
    expect(withCache).toBe(without);
    expect(Object.keys(listRuns(ledger).runs[0]!)).toEqual(
      Object.keys(listRuns(ledger, { limit: 1 }).runs[0]!),
    );
  });
});

describe('the cached list of run folders', () => {
  const namesCache = (ledger: Ledger) => path.join(ledger.dir, 'cache', 'run-names.json');
  const plainList = (ledger: Ledger) => fs.readdirSync(ledger.runsDir).filter(isRunName).sort().reverse();
  const name = (minute: number, id: string) => `25-11-22_10${String(minute).padStart(2, '0')}__a-task__${id}`;
  /** runs/ last changed a minute ago: old enough for its stamp to be trusted. */
  const settle = (ledger: Ledger, then = Math.floor(Date.now() / 1000) - 60) => {
    fs.utimesSync(ledger.runsDir, then, then);
    return then;
  };
  const mtimeNs = (ledger: Ledger) => fs.statSync(ledger.runsDir, { bigint: true }).mtimeNs;

  function folders() {
    const { ledger } = ledgerRepo();
    for (const [minute, id] of [
      [1, 'aaaaaa'],
      [2, 'bbbbbb'],
      [3, 'cccccc'],
    ] as const) {
      fs.mkdirSync(path.join(ledger.runsDir, name(minute, id)));
    }
    fs.mkdirSync(path.join(ledger.runsDir, 'not-a-run'));
    settle(ledger);
    return ledger;
  }

  /** The cache: the stamp, count and newest names on its first line; then every name, one a line. */
  function readNamesCache(ledger: Ledger): { first: Record<string, unknown>; names: string[] } {
    const [first, ...names] = fs.readFileSync(namesCache(ledger), 'utf8').split('\n');
    return { first: JSON.parse(first!), names };
  }

  const namesLines = (names: unknown) => (Array.isArray(names) ? names.join('\n') : JSON.stringify(names));

  /** Applies `edit` to both lists of names in the cache, keeping its stamp. */
  function editNamesCache(ledger: Ledger, edit: (names: string[]) => unknown): void {
    const { first, names } = readNamesCache(ledger);
    const all = edit(names);
    const head = edit(first.head as string[]);
    const total = Array.isArray(all) ? all.length : first.total;
    fs.writeFileSync(namesCache(ledger), `${JSON.stringify({ ...first, total, head })}\n${namesLines(all)}`);
  }

  /** Drops a name from the cache (still valid): a listing without it came from the cache. */
  function dropCachedName(ledger: Ledger, dropped: string): void {
    editNamesCache(ledger, (names) => names.filter((n) => n !== dropped));
  }

  it('equals a plain listing, and is used while runs/ keeps its stamp', () => {
    const ledger = folders();
    expect(fs.existsSync(namesCache(ledger))).toBe(false);
    expect(listRunNames(ledger)).toEqual(plainList(ledger));
    expect(listRunNames(ledger)).toEqual([name(3, 'cccccc'), name(2, 'bbbbbb'), name(1, 'aaaaaa')]);
    dropCachedName(ledger, name(2, 'bbbbbb'));
    expect(listRunNames(ledger)).toEqual([name(3, 'cccccc'), name(1, 'aaaaaa')]);
  });

  it('lists again when a run folder appears or goes, or runs/ is replaced', () => {
    const ledger = folders();
    listRunNames(ledger);
    dropCachedName(ledger, name(2, 'bbbbbb'));
    fs.mkdirSync(path.join(ledger.runsDir, name(4, 'dddddd')));
    expect(listRunNames(ledger)).toEqual(plainList(ledger));
    expect(listRunNames(ledger)).toContain(name(2, 'bbbbbb'));
    settle(ledger);
    listRunNames(ledger);
    fs.rmdirSync(path.join(ledger.runsDir, name(1, 'aaaaaa')));
    expect(listRunNames(ledger)).toEqual(plainList(ledger));
    expect(listRunNames(ledger)).not.toContain(name(1, 'aaaaaa'));
    // A folder made and runs/'s mtime set back (a restore, a copy keeping times): its links changed.
    const then = settle(ledger);
    const stamp = mtimeNs(ledger);
    listRunNames(ledger);
    fs.mkdirSync(path.join(ledger.runsDir, name(5, 'eeeeee')));
    settle(ledger, then);
    expect(mtimeNs(ledger)).toBe(stamp);
    expect(listRunNames(ledger)).toContain(name(5, 'eeeeee'));
    // Another folder in its place with the same runs and times: another inode.
    settle(ledger, then);
    listRunNames(ledger);
    dropCachedName(ledger, name(2, 'bbbbbb'));
    const before = plainList(ledger);
    fs.renameSync(ledger.runsDir, `${ledger.runsDir}.old`);
    fs.mkdirSync(ledger.runsDir);
    for (const n of [...before, 'not-a-run']) fs.mkdirSync(path.join(ledger.runsDir, n));
    settle(ledger, then);
    expect(mtimeNs(ledger)).toBe(stamp);
    expect(listRunNames(ledger)).toEqual(before);
  });

  it('keeps no stamp that is racy: runs/ changed less than 2 s before the listing', () => {
    const ledger = folders();
    const now = Date.now() / 1000;
    fs.utimesSync(ledger.runsDir, now, now);
    expect(listRunNames(ledger)).toEqual(plainList(ledger));
    expect(fs.existsSync(namesCache(ledger))).toBe(false);
    settle(ledger);
    listRunNames(ledger);
    expect(fs.existsSync(namesCache(ledger))).toBe(true);
  });

  it.each<[string, (names: string[]) => unknown]>([
    ['garbage', () => null],
    ['a name that is not a run', (names) => [...names, '../../outside']],
    ['names out of order', (names) => [...names].reverse()],
    ['a number', (names) => [1, ...names]],
  ])('reads a cache holding %s as none', (_, edit) => {
    const ledger = folders();
    listRunNames(ledger);
    dropCachedName(ledger, name(2, 'bbbbbb'));
    editNamesCache(ledger, edit);
    expect(listRunNames(ledger)).toEqual(plainList(ledger));
    expect(listRuns(ledger, { limit: 2 }).runs.map((r) => r.name)).toEqual(plainList(ledger).slice(0, 2));
  });

  it('the newest view reads only the first line: the newest 200 names and the count', () => {
    const { ledger } = ledgerRepo();
    const all: string[] = [];
    for (let i = 0; i < 250; i++) {
      // Minutes 00-49, five runs each: a boundary minute at any limit.
      const n = `25-11-22_10${String(Math.floor(i / 5)).padStart(2, '0')}__a-task__${i.toString(16).padStart(6, '0')}`;
      fs.mkdirSync(path.join(ledger.runsDir, n));
      all.push(n);
    }
    settle(ledger);
    const plain = plainList(ledger);
    expect(listRunNames(ledger)).toEqual(plain);
    const { first } = readNamesCache(ledger);
    expect(first.total).toBe(250);
    expect(first.head).toEqual(plain.slice(0, 200));
    // A limit whose boundary minute goes on past the first line's names reads them all.
    const past = listRuns(ledger, { limit: 198 });
    expect(past.runs.map((r) => r.name)).toEqual(plain.slice(0, 198));
    expect(past.total).toBe(250);
    // The first line edited (one name left out, the next one in): the newest view shows the edit,
    // so it read the first line only; a listing of all of them reads the second.
    const { first: head, names } = readNamesCache(ledger);
    const edited = [...plain.slice(0, 5), ...plain.slice(6, 201)];
    fs.writeFileSync(
      namesCache(ledger),
      `${JSON.stringify({ ...head, total: 249, head: edited })}\n${namesLines(names.slice(0, 249))}`,
    );
    expect(listRuns(ledger, { limit: 20 }).runs.map((r) => r.name)).toEqual(edited.slice(0, 20));
    // (the oldest name left out of the second line: a listing of the folders would have it)
    expect(listRunNames(ledger)).toEqual(plain.slice(0, 249));
  });
});

describe('a cache larger than one part (read and written 32 KB at a time)', () => {
  it('reads back the same value, ASCII or UTF-8 split across parts', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-cache-'));
    try {
      const file = path.join(dir, 'c.json');
      const value = { runs: Array.from({ length: 3000 }, (_, i) => ({ task: `tâche ${i} — ✓`, i })) };
      writeCache(file, asciiJson(value));
      expect(fs.statSync(file).size).toBeGreaterThan(64 * 1024);
      expect(readCache(file)).toEqual(value);
      // Written by hand in UTF-8 (not asciiJson): a character split at a part's edge.
      const text = `{"a":"${'x'.repeat(32 * 1024 - 7)}","b":"é✓😀${'é'.repeat(40_000)}"}`;
      fs.writeFileSync(file, text);
      expect(readCache(file)).toEqual(JSON.parse(text));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
