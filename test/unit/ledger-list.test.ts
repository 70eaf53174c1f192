import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import {
  type Ledger,
  listRuns,
  readRun,
  resolveRun,
  setPointer,
  updateState,
} from '../../src/ledger/index.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { create, idSequence, ledgerRepo } from './fixtures/ledger.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    if (isAgentboxError(error)) return error.code;
    throw error;
  }
  return undefined;
};

/** Runs over several minutes; inside 10:01 the name order (slug) is the reverse of the start order. */
async function fixture() {
  const { repo, ledger } = ledgerRepo();
  const runs = {
    old: await create(ledger, 'old scout', '2025-11-22T09:00:00Z', { ids: idSequence('000001') }),
    early: await create(ledger, 'zzz early', '2025-11-22T10:01:05Z', { ids: idSequence('000002') }),
    mid: await create(ledger, 'mmm middle', '2025-11-22T10:01:30Z', {
      ids: idSequence('000003'),
      type: 'fix',
    }),
    late: await create(ledger, 'aaa late', '2025-11-22T10:01:50Z', { ids: idSequence('000004') }),
  };
  return { repo, ledger, runs };
}

describe('listRuns', () => {
  it('lists newest first, inside a minute by start time, not by name', async () => {
    const { ledger, runs } = await fixture();
    const { runs: listed, total } = listRuns(ledger, { limit: 20 });
    expect(total).toBe(4);
    expect(listed.map((r) => r.name)).toEqual([
      runs.late.name,
      runs.mid.name,
      runs.early.name,
      runs.old.name,
    ]);
    expect(listed[1]).toEqual({
      name: runs.mid.name,
      id: '000003',
      type: 'fix',
      status: 'ACTIVE',
      task: 'mmm middle',
      started_at: '2025-11-22T10:01:30.000Z',
      ended_at: null,
      failure_kind: null,
      cost_usd: null,
      tool_calls: 0,
      problem: null,
      ran_on: null,
      claimed_by: null,
    });
  });

  it('a limit cutting into a minute still returns the newest runs of that minute', async () => {
    const { ledger, runs } = await fixture();
    expect(listRuns(ledger, { limit: 1 }).runs.map((r) => r.name)).toEqual([runs.late.name]);
    expect(listRuns(ledger, { limit: 2 })).toMatchObject({
      total: 4,
      runs: [{ id: '000004' }, { id: '000003' }],
    });
    expect(listRuns(ledger, { limit: 0 })).toEqual({ runs: [], total: 4 });
    expect(listRuns(ledger, { limit: -2 })).toEqual({ runs: [], total: 4 });
  });

  it('--all orders a minute crowded with runs (a CI burst) by start time too', async () => {
    const { ledger } = ledgerRepo();
    // Slugs a00…a11 started in the reverse order: by name, each minute lists them backwards.
    for (let i = 0; i < 12; i++) {
      const id = String(i).padStart(6, '0');
      await create(ledger, `a${id.slice(-2)}`, `2025-11-22T10:05:${String(40 - i).padStart(2, '0')}Z`, {
        ids: idSequence(id),
      });
      await create(ledger, `b${id.slice(-2)}`, `2025-11-22T10:07:${String(40 - (i % 3)).padStart(2, '0')}Z`, {
        ids: idSequence(`1${id.slice(1)}`),
      });
    }
    const all = listRuns(ledger, {}).runs;
    expect(all).toEqual(listRuns(ledger, { limit: 100 }).runs);
    expect(all.map((r) => r.task).slice(12)).toEqual(
      Array.from({ length: 12 }, (_, i) => `a${String(i).padStart(2, '0')}`),
    );
    expect(all.slice(0, 3).map((r) => r.started_at)).toEqual(Array(3).fill('2025-11-22T10:07:40.000Z'));
  });

  it('without a limit (--all) answers from INDEX.jsonl, the same as the files say', async () => {
    const { ledger, runs } = await fixture();
    await updateState(ledger, runs.mid, {
      status: 'CRASHED',
      failure: { kind: 'killed', message: 'SIGKILL' },
    });
    await updateState(ledger, runs.old, { status: 'DONE' });
    const all = listRuns(ledger, {});
    expect(all).toEqual(listRuns(ledger, { limit: 100 }));
    expect(all.runs[1]).toMatchObject({ status: 'CRASHED', failure_kind: 'killed' });
    expect(all.runs[1]?.ended_at).toMatch(/^\d{4}-/);
  });

  it('--all proves it reads the index: a state.json edited behind its back does not show', async () => {
    const { ledger, runs } = await fixture();
    const file = path.join(runs.old.dir, 'state.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"ACTIVE"', '"MERGED"'));
    expect(listRuns(ledger, {}).runs.at(-1)?.status).toBe('ACTIVE');
    expect(listRuns(ledger, { limit: 10 }).runs.at(-1)?.status).toBe('MERGED');
  });

  it('reads the files of runs the index does not know, and shows damaged runs instead of failing', async () => {
    const { ledger, runs } = await fixture();
    fs.writeFileSync(ledger.indexJsonl, '');
    fs.writeFileSync(path.join(runs.early.dir, 'state.json'), '{ torn');
    fs.mkdirSync(path.join(ledger.runsDir, '25-11-22_1100__being-created__00000f'));
    fs.writeFileSync(path.join(ledger.runsDir, 'notes.txt'), 'not a run');
    fs.mkdirSync(path.join(ledger.runsDir, '.hidden'));
    for (const limit of [undefined, 10]) {
      const { runs: listed, total } = listRuns(ledger, limit === undefined ? {} : { limit });
      expect(total).toBe(5);
      expect(listed.map((r) => [r.id, r.status])).toEqual([
        ['00000f', null],
        ['000004', 'ACTIVE'],
        ['000003', 'ACTIVE'],
        ['000002', null],
        ['000001', 'ACTIVE'],
      ]);
      expect(listed[0]?.problem).toBe('no state.json; no meta.yaml');
      expect(listed[3]?.problem).toMatch(/cannot read .*state.json/);
      expect(listed[3]?.task).toBe('zzz early');
    }
  });

  it('an empty ledger lists nothing', () => {
    const { ledger } = ledgerRepo();
    expect(listRuns(ledger, { limit: 20 })).toEqual({ runs: [], total: 0 });
    expect(listRuns(ledger, {})).toEqual({ runs: [], total: 0 });
  });
});

describe('readRun', () => {
  it('returns meta, state and the artifacts present', async () => {
    const { ledger, runs } = await fixture();
    const dir = runs.mid.dir;
    fs.writeFileSync(path.join(dir, 'report.md'), '# report\n');
    fs.writeFileSync(path.join(dir, 'raw', 'stream.jsonl'), '{}\n');
    fs.mkdirSync(path.join(dir, 'patches'));
    fs.writeFileSync(path.join(dir, 'patches', 'agent_1.patch'), 'diff\n');
    fs.writeFileSync(path.join(dir, 'state.json.1234abcd'), 'temp file of an atomic write');
    const run = readRun(ledger, runs.mid.name);
    expect(run).toEqual({
      name: runs.mid.name,
      dir,
      meta: runs.mid.meta,
      state: runs.mid.state,
      files: ['patches/agent_1.patch', 'raw/stream.jsonl', 'report.md'],
    });
  });

  it.each([
    ['../../etc', 'RUN_NAME_INVALID'],
    ['latest', 'RUN_NOT_FOUND'],
    ['25-11-22_1430__nope__abcdef', 'RUN_NOT_FOUND'],
  ])('refuses %s with %s', async (name, code) => {
    const { ledger } = await fixture();
    expect(codeOf(() => readRun(ledger, name))).toBe(code);
  });

  it('a run without meta.yaml is RUN_CORRUPT; without state.json it has state null', async () => {
    const { ledger, runs } = await fixture();
    fs.rmSync(path.join(runs.old.dir, 'state.json'));
    expect(readRun(ledger, runs.old.name).state).toBeNull();
    fs.rmSync(path.join(runs.old.dir, 'meta.yaml'));
    expect(codeOf(() => readRun(ledger, runs.old.name))).toBe('RUN_CORRUPT');
  });
});

describe('resolveRun', () => {
  type Runs = Awaited<ReturnType<typeof fixture>>['runs'];
  it.each<[string, (runs: Runs) => string, keyof Runs]>([
    ['a full name', (r) => r.mid.name, 'mid'],
    ['a short id', () => '000002', 'early'],
    ['a short id in capitals', () => '000002'.toUpperCase(), 'early'],
    ['a unique prefix', () => '25-11-22_0900', 'old'],
    ['a prefix into the slug', () => '25-11-22_1001__mmm', 'mid'],
    ['latest', () => 'latest', 'late'],
  ])('finds %s', async (_label, ref, expected) => {
    const { ledger, runs } = await fixture();
    expect(resolveRun(ledger, ref(runs))).toBe(runs[expected].name);
  });

  it('follows pointers, and says when one is not set', async () => {
    const { ledger, runs } = await fixture();
    expect(() => resolveRun(ledger, 'last-fail')).toThrow(/pointer "last-fail" is not set yet/);
    await updateState(ledger, runs.early, { status: 'ABORTED' });
    expect(resolveRun(ledger, 'last-fail')).toBe(runs.early.name);
    setPointer(ledger, 'favourite', runs.old.name);
    expect(resolveRun(ledger, 'favourite')).toBe(runs.old.name);
    fs.rmSync(runs.early.dir, { recursive: true });
    expect(() => resolveRun(ledger, 'last-fail')).toThrow(
      `points at ${runs.early.name}, which no longer exists`,
    );
  });

  it('latest falls back to the newest run when the link is gone or dangling', async () => {
    const { ledger, runs } = await fixture();
    fs.rmSync(runs.late.dir, { recursive: true });
    expect(resolveRun(ledger, 'latest')).toBe(runs.mid.name);
    fs.rmSync(ledger.latest);
    expect(resolveRun(ledger, 'latest')).toBe(runs.mid.name);
  });

  it('latest with no runs says how to start one', () => {
    const { ledger } = ledgerRepo();
    let error: unknown;
    try {
      resolveRun(ledger, 'latest');
    } catch (e) {
      error = e;
    }
    expect(isAgentboxError(error) && error.code).toBe('RUN_NOT_FOUND');
    expect(isAgentboxError(error) && error.hint).toBe('start one with: agentbox scout "<question>"');
  });

  it('an ambiguous prefix lists the candidates', async () => {
    const { ledger, runs } = await fixture();
    expect(() => resolveRun(ledger, '25-11-22_1001')).toThrow(
      `"25-11-22_1001" matches 3 runs:\n    000002  ${runs.early.name}\n    000003  ${runs.mid.name}\n    000004  ${runs.late.name}`,
    );
    expect(codeOf(() => resolveRun(ledger, '25-11-22'))).toBe('RUN_AMBIGUOUS');
  });

  it.each([
    ['../x', 'RUN_NAME_INVALID'],
    ['/etc/passwd', 'RUN_NAME_INVALID'],
    ['runs\\x', 'RUN_NAME_INVALID'],
    ['.agents', 'RUN_NAME_INVALID'],
    ['nul\0byte', 'RUN_NAME_INVALID'],
    ['abcdef', 'RUN_NOT_FOUND'],
    ['nothing-like-it', 'RUN_NOT_FOUND'],
    ['25-11-22_1430__nope__abcdef', 'RUN_NOT_FOUND'],
  ])('refuses %j with %s and changes nothing', async (ref, code) => {
    const { repo, ledger } = await fixture();
    const before = snapshotTree(repo.dir);
    expect(codeOf(() => resolveRun(ledger, ref))).toBe(code);
    expect(snapshotTree(repo.dir)).toEqual(before);
  });

  it('an unknown ref names the runs folder and the next command; a mistyped pointer, the pointer', async () => {
    const { ledger } = await fixture();
    const error = (ref: string) => {
      try {
        resolveRun(ledger, ref);
      } catch (e) {
        if (!isAgentboxError(e)) throw e;
        return e;
      }
      throw new Error(`${ref} resolved`);
    };
    expect(error('x').message).toBe(`no run named "x" in ${(ledger as Ledger).runsDir}`);
    expect(error('x').hint).toBe('run "agentbox status" to list runs');
    expect(error('lates').hint).toBe('did you mean latest? run "agentbox status" to list runs');
    expect(error('last-fial').hint).toBe('did you mean last-fail? run "agentbox status" to list runs');
  });
});
