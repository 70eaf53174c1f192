import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { reactivated, readState, setLatest, setPointer, updateState } from '../../src/ledger/index.js';
import { appendIndexEvent, makeIndexEvent, parseIndexLine } from '../../src/ledger/index-log.js';
import { regenerateIndexMd } from '../../src/ledger/index-md.js';
import { onBehalfOf } from '../../src/process/owner.js';
import { processStartTime } from '../../src/process/reap.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { create, errorOf, ledgerRepo } from './fixtures/ledger.js';

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('updateState', () => {
  it('a status change appends an event, rewrites INDEX.md and moves the pointer', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'flaky thing', '2025-11-22T14:30:00Z');
    const failure = { kind: 'timeout', message: 'no output for 10 minutes' } as const;
    const state = await updateState(ledger, run, { status: 'CRASHED', failure }, undefined, {
      now: new Date('2025-11-22T14:45:00Z'),
    });
    expect(state).toMatchObject({ status: 'CRASHED', failure, ended_at: '2025-11-22T14:45:00.000Z' });
    expect(readState(run.dir)).toEqual(state);
    const last = parseIndexLine(lines(ledger.indexJsonl).at(-1)!);
    expect(last).toMatchObject({
      event: 'crashed',
      status: 'CRASHED',
      detail: failure.message,
      failure_kind: 'timeout',
    });
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('| scout | CRASHED |');
    expect(fs.readlinkSync(path.join(ledger.pointersDir, 'last-fail'))).toBe(`../runs/${run.name}`);
  });

  it("served for another process: INDEX.md follows an end's reply, but is there before a start's", async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'served thing', '2025-11-22T14:30:00Z');
    const later: (() => Promise<unknown>)[] = [];
    const served = <T>(fn: () => Promise<T>) => onBehalfOf(4242, {}, fn, (work) => later.push(work));
    await updateState(ledger, run, { status: 'CRASHED', failure: { kind: 'crashed', message: 'x' } });
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('| scout | CRASHED |');
    // Taken up again (a resume): the view shows it at work before the command goes on.
    await served(() => updateState(ledger, run, { status: 'ACTIVE' }));
    expect(later).toHaveLength(0);
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('| scout | ACTIVE |');
    await served(() => updateState(ledger, run, { status: 'DONE' }));
    // The state and INDEX.jsonl are written; the view waits for the reply.
    expect(readState(run.dir)!.status).toBe('DONE');
    expect(parseIndexLine(lines(ledger.indexJsonl).at(-1)!)).toMatchObject({ status: 'DONE' });
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('| scout | ACTIVE |');
    expect(later).toHaveLength(1);
    await later[0]!();
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('| scout | DONE |');
  });

  it.each([
    ['DONE', 'last-done'],
    ['REVIEW', 'last-review'],
    ['ABORTED', 'last-fail'],
    ['STALLED', 'last-fail'],
  ] as const)('%s points %s at the run', async (status, pointer) => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    await updateState(ledger, run.name, { status });
    expect(fs.readdirSync(ledger.pointersDir)).toEqual([pointer]);
    expect(fs.readlinkSync(path.join(ledger.pointersDir, pointer))).toBe(`../runs/${run.name}`);
  });

  it('a patch without a status change writes state.json only; an explicit event is logged', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    const indexBefore = fs.readFileSync(ledger.indexJsonl, 'utf8');
    const mdBefore = fs.readFileSync(ledger.indexMd, 'utf8');
    await updateState(ledger, run, { last_heartbeat: 'H', session_id: 'sess-1' });
    expect(readState(run.dir)).toMatchObject({ last_heartbeat: 'H', session_id: 'sess-1', status: 'ACTIVE' });
    expect(fs.readFileSync(ledger.indexJsonl, 'utf8')).toBe(indexBefore);
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toBe(mdBefore);
    await updateState(ledger, run, { session_id: 'sess-2' }, { event: 'session', detail: 'sess-2' });
    expect(parseIndexLine(lines(ledger.indexJsonl).at(-1)!)).toMatchObject({
      event: 'session',
      detail: 'sess-2',
    });
  });

  it('queues overlapping updates of one run: none is lost', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    // Each patch touches a different field: a read-modify-write race would keep only the last.
    await Promise.all([
      updateState(ledger, run, { session_id: 'sess-1' }),
      updateState(ledger, run, { tool_calls: 5 }),
      updateState(ledger, run.name, { status: 'DONE' }),
      updateState(ledger, run, { last_heartbeat: 'H' }),
    ]);
    expect(readState(run.dir)).toMatchObject({
      session_id: 'sess-1',
      tool_calls: 5,
      status: 'DONE',
      last_heartbeat: 'H',
    });
  });

  it('a failed update does not block the next one', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    const bad = updateState(ledger, run, { tool_calls: -1 });
    const good = updateState(ledger, run, { tool_calls: 2 });
    await expect(bad).rejects.toThrow(/invalid state patch/);
    await expect(good).resolves.toMatchObject({ tool_calls: 2 });
  });

  it.each([
    ['../escape', 'RUN_NAME_INVALID'],
    ['not-a-run-name', 'RUN_NAME_INVALID'],
    ['25-11-22_1430__nope__abcdef', 'RUN_NOT_FOUND'],
  ])('refuses %s with %s and changes nothing', async (name, code) => {
    const { repo, ledger } = ledgerRepo();
    await create(ledger, 'x', '2025-11-22T14:30:00Z');
    const before = snapshotTree(repo.dir);
    const error = await errorOf(() => updateState(ledger, name, { status: 'DONE' }));
    expect(isAgentboxError(error) && error.code).toBe(code);
    expect(snapshotTree(repo.dir)).toEqual(before);
  });

  it('refuses a run without meta.yaml before writing anything', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    fs.rmSync(path.join(run.dir, 'meta.yaml'));
    const before = snapshotTree(repo.dir);
    const error = await errorOf(() => updateState(ledger, run.name, { status: 'DONE' }));
    expect(isAgentboxError(error) && error.code).toBe('RUN_CORRUPT');
    expect(snapshotTree(repo.dir)).toEqual(before);
  });
});

describe('latest and pointers', () => {
  it('are relative symlinks replaced in place, with no temp files left', async () => {
    const { ledger } = ledgerRepo();
    const a = await create(ledger, 'a', '2025-11-22T14:30:00Z');
    const b = await create(ledger, 'b', '2025-11-22T14:31:00Z');
    expect(fs.readlinkSync(ledger.latest)).toBe(`runs/${b.name}`);
    setLatest(ledger, a.name);
    setPointer(ledger, 'last-fail', b.name);
    setPointer(ledger, 'last-fail', a.name);
    expect(fs.readlinkSync(ledger.latest)).toBe(`runs/${a.name}`);
    expect(fs.readlinkSync(path.join(ledger.pointersDir, 'last-fail'))).toBe(`../runs/${a.name}`);
    // The links resolve to the run folders.
    expect(fs.realpathSync(path.join(ledger.pointersDir, 'last-fail'))).toBe(a.dir);
    expect(fs.readdirSync(ledger.dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(fs.readdirSync(ledger.pointersDir)).toEqual(['last-fail']);
  });

  it('refuse names that are not pointers or runs (a bug in the caller)', () => {
    const { ledger } = ledgerRepo();
    expect(() => setPointer(ledger, '../x', '25-11-22_1430__x__abcdef')).toThrow(/invalid pointer name/);
    expect(() => setPointer(ledger, 'last-fail', '../../etc')).toThrow(/invalid run name/);
  });
});

describe('regenerateIndexMd', () => {
  it('renders again when INDEX.jsonl grew while it was writing, so no event is missing', async () => {
    const { ledger } = ledgerRepo();
    const first = await create(ledger, 'first', '2025-11-22T14:30:00Z');
    const pending = regenerateIndexMd(ledger);
    // Appended after regenerateIndexMd read the log, before its write landed: another process.
    const late = { ...first.meta, run_name: '25-11-22_1431__late__abcdef', task: 'late' };
    appendIndexEvent(ledger, makeIndexEvent(late, first.state, 'created', undefined, new Date()));
    await pending;
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain('[25-11-22_1431__late__abcdef]');
  });
});

describe('updateState with a patch function', () => {
  it('returning null writes nothing and records no event: the state was not what the caller expected', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'a task', '2025-11-22T14:30:00Z');
    const before = fs.readFileSync(path.join(run.dir, 'state.json'), 'utf8');
    const index = fs.readFileSync(ledger.indexJsonl, 'utf8');
    const state = await updateState(ledger, run.name, () => null, { event: 'watchdog' });
    expect(state.status).toBe('ACTIVE');
    expect(fs.readFileSync(path.join(run.dir, 'state.json'), 'utf8')).toBe(before);
    expect(fs.readFileSync(ledger.indexJsonl, 'utf8')).toBe(index);
    const changed = await updateState(ledger, run.name, (current) => ({
      tool_calls: current.tool_calls + 2,
    }));
    expect(changed.tool_calls).toBe(2);
  });

  it('reactivated() takes a run up in this process, with a fresh heartbeat', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'a task', '2025-11-22T14:30:00Z');
    await updateState(ledger, run.name, { status: 'CRASHED', failure: { kind: 'crashed', message: 'gone' } });
    const at = new Date('2026-01-01T00:00:00Z');
    const state = await updateState(ledger, run.name, reactivated(at));
    expect(state).toMatchObject({
      status: 'ACTIVE',
      failure: null,
      ended_at: null,
      pid: process.pid,
      last_heartbeat: at.toISOString(),
    });
    expect(state.pid_start).toBe(processStartTime(process.pid));
  });
});
