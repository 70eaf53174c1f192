import { afterEach, describe, expect, it } from 'vitest';
import { Tally } from '../../src/budget/tally.js';
import { EventLog } from '../../src/ledger/events.js';
import { exitWithin, type OwnedChild, spawnOwned } from '../../src/process/owned.js';
import { killMarked, markedProcesses } from '../../src/process/reap.js';
import { claudeEnd } from '../../src/run/claude-end.js';
import { Halt } from '../../src/run/halt.js';
import { tempDir } from '../helpers/git-repo.js';

// Real processes stand in for claude: `sh -c` scripts that exit when, and how, a case needs.
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const started: OwnedChild[] = [];

function owned(script: string): OwnedChild {
  const child = spawnOwned('sh', ['-c', script], { cwd: '/', env: ENV });
  started.push(child);
  return child;
}

function logIn() {
  const dir = tempDir();
  const log = new EventLog(dir);
  const halt = new Halt({ log, tally: new Tally(null, null, null), maxCostUsd: null, root: dir });
  return { log, halt };
}

afterEach(async () => {
  for (const child of started.splice(0)) {
    await child.stop(500);
    killMarked(child.mark);
    expect(markedProcesses(child.mark)).toEqual([]);
  }
});

describe('exitWithin', () => {
  it('is how the process ended when it ends in time, null when it still runs (and it is left running)', async () => {
    expect(await exitWithin(owned('exit 4'), 5000)).toEqual({ code: 4, signal: null });
    const slow = owned('sleep 30');
    expect(await exitWithin(slow, 100)).toBeNull();
    expect(markedProcesses(slow.mark).length).toBeGreaterThan(0);
  });
});

describe("claudeEnd: a read-only run ends at claude's result line", () => {
  it('a read-only run: ended at the result (null) while claude runs on; the release awaits its exit, and logs a bad one', async () => {
    const { log, halt } = logIn();
    const child = owned('sleep 0.3; exit 3');
    const end = claudeEnd(child, Promise.resolve(), { readOnly: true, halt });
    expect(await end.ended).toBeNull();
    expect(markedProcesses(child.mark).length).toBeGreaterThan(0);
    expect(await end.finish(log)).toEqual({ code: 3, signal: null });
    expect(log.read().filter((e) => e.event === 'claude_exit_after_end')).toMatchObject([
      { code: 3, signal: null },
    ]);
  });

  it('a clean exit after the result is not logged', async () => {
    const { log, halt } = logIn();
    const end = claudeEnd(owned('sleep 0.1'), Promise.resolve(), { readOnly: true, halt });
    expect(await end.ended).toBeNull();
    await end.finish(log);
    expect(log.read()).toEqual([]);
  });

  it('claude still running `graceMs` after its result is stopped, and that is logged', async () => {
    const { log, halt } = logIn();
    const child = owned('sleep 30');
    const end = claudeEnd(child, Promise.resolve(), { readOnly: true, halt, graceMs: 200 });
    expect(await end.ended).toBeNull();
    expect(await end.finish(log)).toMatchObject({ signal: 'SIGTERM' });
    expect(log.read().map((e) => e.event)).toEqual(['claude_stopped_after_end']);
    expect(markedProcesses(child.mark)).toEqual([]);
  });

  it('a fix run, a run being stopped, and a claude that exits before any result: the end is the exit', async () => {
    const fix = logIn();
    const fixEnd = claudeEnd(owned('sleep 0.2; exit 5'), Promise.resolve(), {
      readOnly: false,
      halt: fix.halt,
    });
    expect(await fixEnd.ended).toEqual({ code: 5, signal: null });

    const stopped = logIn();
    stopped.halt.halt({ kind: 'interrupted', by: 'SIGINT' });
    const stoppedEnd = claudeEnd(owned('sleep 0.2; exit 6'), Promise.resolve(), {
      readOnly: true,
      halt: stopped.halt,
    });
    expect(await stoppedEnd.ended).toEqual({ code: 6, signal: null });

    const none = logIn();
    const noResult = claudeEnd(owned('exit 7'), new Promise<void>(() => {}), {
      readOnly: true,
      halt: none.halt,
    });
    expect(await noResult.ended).toEqual({ code: 7, signal: null });
    // Ended at the exit: the release stops nothing more and logs nothing.
    await noResult.finish(none.log);
    expect(none.log.read()).toEqual([]);
  });
});
