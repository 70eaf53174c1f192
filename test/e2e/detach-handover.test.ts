import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { awaitHandOver, spawnWorker } from '../../src/run/detach.js';
import { claudeHome } from '../helpers/claude.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, newTestTag } from '../helpers/processes.js';

/**
 * A detached worker (`--detach`: a run's `__exec`, a group's `__exec-group`) writes the state file
 * the command that started it writes last (the worker's pid). Before the hand-over, a worker that
 * started at once raced that write: on a busy machine the parent's read-modify-write of a group's
 * state.json dropped the member the worker had just recorded (issue 36: a group's attempt 1 "ended
 * with no run"). Now the worker does nothing until the parent has recorded it.
 */
describe('the hand-over to a detached worker', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it.each([['__exec-group'], ['__exec']])(
    '%s waits until the command that started it has recorded it, then goes on',
    async (command) => {
      const repo = gitRepo();
      const tag = newTestTag();
      const home = claudeHome();
      const env = { PATH: process.env.PATH!, HOME: home.home, AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag };
      const log = path.join(tempDir(), 'worker.log');
      const seen: string[] = [];
      const pid = await spawnWorker(
        { cwd: repo.dir, env, io: { out: () => {}, err: () => {}, isTTY: false, color: false } },
        repo.dir,
        [command, 'no-such-thing'],
        log,
        async (worker) => {
          // The parent is slow to record the worker (a busy machine): the worker must not act meanwhile.
          await sleep(2500);
          expect(worker).toBeGreaterThan(0);
          expect(() => process.kill(worker!, 0)).not.toThrow();
          seen.push(fs.readFileSync(log, 'utf8'));
        },
      );
      expect(seen).toEqual(['']);
      // Handed over: it goes on, and fails as the repository asks (agentbox is not set up there).
      const deadline = Date.now() + 30_000;
      while (fs.readFileSync(log, 'utf8') === '' && Date.now() < deadline) await sleep(100);
      expect(fs.readFileSync(log, 'utf8')).toMatch(/agentbox is not set up/);
      expect(pid).toBeGreaterThan(0);
      await expectNoProcessesLeft(tag, 10_000);
    },
    60_000,
  );

  it('a worker started by hand (its stdin a terminal) does not wait; one nobody hands over goes on after the wait', async () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    await awaitHandOver(tty, 60_000);
    const never = new PassThrough();
    const started = Date.now();
    await awaitHandOver(never, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const closed = new PassThrough();
    setTimeout(() => closed.end('anything'), 50);
    await awaitHandOver(closed, 60_000);
  });
});
