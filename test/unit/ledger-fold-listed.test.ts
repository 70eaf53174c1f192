import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Ledger, listRuns, updateState } from '../../src/ledger/index.js';
import { summaryFromFiles } from '../../src/ledger/list.js';
import { create, idSequence, threeRuns } from './fixtures/ledger.js';

/*
 * `status --all` from the cache alone (src/ledger/fold-cache.ts `listed`): when INDEX.jsonl has
 * not grown and runs/ has the stamp under which the cache's runs were exactly its folders. Every
 * answer must equal a listing from scratch. A test that needs to know the cache answered alone
 * swaps two runs inside it: a listing would sort them back, the cache alone keeps them swapped.
 */

const foldCache = (ledger: Ledger) => path.join(ledger.dir, 'cache', 'index-fold.json');
const readCache = (ledger: Ledger) => JSON.parse(fs.readFileSync(foldCache(ledger), 'utf8'));

/** runs/ last changed a minute ago: old enough for its stamp to be trusted. */
function settle(ledger: Ledger): void {
  const then = Math.floor(Date.now() / 1000) - 60;
  fs.utimesSync(ledger.runsDir, then, then);
}

/** The listing from scratch: no cache at all. */
function fresh(ledger: Ledger): string {
  const saved = `${ledger.dir}/cache.saved`;
  fs.renameSync(path.join(ledger.dir, 'cache'), saved);
  try {
    return JSON.stringify(listRuns(ledger));
  } finally {
    fs.rmSync(path.join(ledger.dir, 'cache'), { recursive: true, force: true });
    fs.renameSync(saved, path.join(ledger.dir, 'cache'));
  }
}

/** Swaps the first two runs in the cache (still a valid cache): only the cache alone shows it. */
function swapCached(ledger: Ledger): string[] {
  const cache = readCache(ledger);
  for (const column of Object.values(cache.runs) as unknown[][]) {
    [column[0], column[1]] = [column[1], column[0]];
  }
  fs.writeFileSync(foldCache(ledger), JSON.stringify(cache));
  return cache.runs.name;
}

const names = (ledger: Ledger) => listRuns(ledger).runs.map((run) => run.name);

/** Three runs, settled, listed once: the cache holds them with runs/'s stamp. */
async function listedRuns() {
  const runs = await threeRuns();
  settle(runs.ledger);
  listRuns(runs.ledger);
  expect(readCache(runs.ledger).listed).toEqual(expect.any(String));
  return runs;
}

describe('status --all from the cache alone', () => {
  it('answers from the cache while the log and runs/ are unchanged, equal to a listing', async () => {
    const { ledger } = await listedRuns();
    const listing = JSON.stringify(listRuns(ledger));
    expect(listing).toBe(fresh(ledger));
    const swapped = swapCached(ledger);
    expect(names(ledger)).toEqual(swapped);
  });

  it('lists again when a run appears, and records the new stamp once it settles', async () => {
    const { ledger } = await listedRuns();
    swapCached(ledger);
    await create(ledger, 'a new run', '2025-11-22T12:00:00Z', { ids: idSequence('dddddd') });
    // runs/ changed just now: a racy stamp is not kept.
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
    expect(readCache(ledger).listed).toBeNull();
    settle(ledger);
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
    expect(names(ledger)[0]).toContain('dddddd');
    expect(readCache(ledger).listed).toEqual(expect.any(String));
  });

  it('keeps answering alone while new events change runs but add or drop none', async () => {
    const { ledger, plan } = await listedRuns();
    await updateState(ledger, plan, { status: 'DONE' });
    expect(listRuns(ledger).runs.find((run) => run.name === plan.name)?.status).toBe('DONE');
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
    const swapped = swapCached(ledger);
    expect(names(ledger)).toEqual(swapped);
  });

  it('lists again when a folder goes, or the log names a run runs/ does not have', async () => {
    const { ledger, scout } = await listedRuns();
    swapCached(ledger);
    fs.rmSync(scout.dir, { recursive: true });
    expect(names(ledger)).not.toContain(scout.name);
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
    // A log line for a run with no folder (a hand edit): the runs are no longer runs/'s folders.
    settle(ledger);
    listRuns(ledger);
    const line = fs.readFileSync(ledger.indexJsonl, 'utf8').trimEnd().split('\n').at(-1)!;
    const ghost = '25-11-22_1300__ghost__eeeeee';
    fs.appendFileSync(ledger.indexJsonl, `${line.replace(/"run":"[^"]+"/, `"run":"${ghost}"`)}\n`);
    expect(names(ledger)).not.toContain(ghost);
    expect(readCache(ledger).listed).toBeNull();
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
  });

  it('never answers alone for a run the log does not know: it is read from its files', async () => {
    const { ledger } = await listedRuns();
    const loose = path.join(ledger.runsDir, '25-11-22_1400__made-by-hand__ffffff');
    fs.mkdirSync(loose);
    settle(ledger);
    const listed = listRuns(ledger).runs;
    expect(listed[0]).toEqual(summaryFromFiles(ledger, path.basename(loose)));
    expect(listed[0]!.problem).toMatch(/state\.json/);
    expect(listRuns(ledger).runs[0]).toEqual(listed[0]);
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
  });

  it.each<[string, (names: string[]) => string[]]>([
    ['a name that is not a run', (n) => ['../../outside', ...n.slice(1)]],
    ['a name with a path in it', (n) => [`${n[0]}/../x`, ...n.slice(1)]],
  ])('reads a cache holding %s as no listing', async (_, edit) => {
    const { ledger } = await listedRuns();
    const cache = readCache(ledger);
    cache.runs.name = edit(cache.runs.name);
    fs.writeFileSync(foldCache(ledger), JSON.stringify(cache));
    const got = names(ledger);
    expect(got.every((name) => !name.includes('/'))).toBe(true);
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
  });

  it('answers alone after the log was replaced by another file only when it is folded again', async () => {
    const { ledger } = await listedRuns();
    swapCached(ledger);
    const copy = `${ledger.indexJsonl}.copy`;
    fs.copyFileSync(ledger.indexJsonl, copy);
    fs.renameSync(copy, ledger.indexJsonl);
    expect(JSON.stringify(listRuns(ledger))).toBe(fresh(ledger));
  });
});
