import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupStatus } from '../../src/group/attempts.js';
import { type CreateGroupInput, createGroup, readGroup, updateGroupState } from '../../src/group/store.js';
import { processStartTime } from '../../src/process/reap.js';
import { planLines, withGroupLock } from '../../src/recover/group.js';
import { markGroupCrashed } from '../../src/watchdog/group.js';
import { ledgerRepo } from './fixtures/ledger.js';

const INPUT: CreateGroupInput = {
  task: 'set x to 42',
  attempts: 3,
  models: null,
  maxParallel: 2,
  firstPass: false,
  maxCostUsd: null,
  repoShaStart: 'f'.repeat(40),
  runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 5, model: null },
};

/** A pid that was a process and is gone now. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe("a group's process gone (the watchdog, src/watchdog/group.ts)", () => {
  it('marks the group ENDED with crashed; it shows CRASHED until taken up; a live or decided group is left', async () => {
    const { ledger } = ledgerRepo();
    const group = await createGroup(ledger, INPUT);
    // Alive (this process): left as it is.
    expect(await markGroupCrashed(ledger, group.meta.group_id)).toBeNull();
    await updateGroupState(ledger, group.name, () => ({ pid: deadPid(), pid_start: null }));
    expect(await markGroupCrashed(ledger, group.meta.group_id)).toBe(group.name);
    const marked = readGroup(ledger, group.name);
    expect(marked.state).toMatchObject({
      status: 'ENDED',
      crashed: { detail: expect.stringContaining('is gone') },
    });
    // Once is enough: a second watchdog finds it no longer ACTIVE.
    expect(await markGroupCrashed(ledger, group.meta.group_id)).toBeNull();
    const run = (status: string) => ({ state: { status } }) as never;
    const of = (...runs: (string | null)[]) =>
      runs.map((s, i) => ({ attempt: i + 1, model: null, name: s ? `r${i}` : null, run: s ? run(s) : null }));
    expect(groupStatus(marked, of('REVIEW', 'CRASHED', null), false)).toBe('CRASHED');
    expect(groupStatus(marked, of('CRASHED', 'CRASHED', 'CRASHED'), false)).toBe('CRASHED');
    // Every attempt started, one stopped by hand, the rest gone with the group's process (kill -9):
    // CRASHED, which recover takes up (it said ABORTED, found by a user's eye).
    expect(groupStatus(marked, of('ABORTED', 'CRASHED', 'CRASHED'), false)).toBe('CRASHED');
    // Taken up (src/group/run.ts clears it): as any ended group.
    const taken = { ...marked, state: { ...marked.state, crashed: null } };
    expect(groupStatus(taken, of('REVIEW', 'ABORTED', null), false)).toBe('REVIEW');
    await updateGroupState(ledger, group.name, () => ({ status: 'MERGED', crashed: null }));
    expect(await markGroupCrashed(ledger, group.meta.group_id)).toBeNull();
    expect(await markGroupCrashed(ledger, 'abcdef')).toBeNull();
  });

  it('is taken up by one process at a time: a live holder refuses the next, a dead one is taken over', async () => {
    const { ledger } = ledgerRepo();
    const group = await createGroup(ledger, INPUT);
    const rc = { ledger } as never;
    const lock = path.join(group.dir, 'take-up.lock');
    const inside = await withGroupLock(rc, group.name, async () => {
      expect(fs.existsSync(lock)).toBe(true);
      const second = await withGroupLock(rc, group.name, async () => 'twice').catch((e: Error) => e.message);
      expect(second).toContain('is being taken up by another agentbox');
      return 'once';
    });
    expect(inside).toBe('once');
    expect(fs.existsSync(lock)).toBe(false);
    fs.writeFileSync(lock, JSON.stringify({ pid: deadPid(), pid_start: processStartTime(process.pid) }));
    expect(await withGroupLock(rc, group.name, async () => 'taken over')).toBe('taken over');
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('says what becomes of each attempt, one line each', () => {
    expect(
      planLines([
        { attempt: 1, run: '26-11-27_0608__set-x__dcd90c', action: 'resume', reason: 'it goes on' },
        { attempt: 2, run: null, action: 'start', reason: 'it never started' },
      ]),
    ).toBe('  attempt 1 (dcd90c): resume — it goes on\n  attempt 2: start — it never started\n');
  });
});
