import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as runCli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { reopenRun } from '../../src/interactive/open-run.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { isAlive, processStartTime } from '../../src/process/reap.js';
import { loadRunContext } from '../../src/run/begin/context.js';
import { endOrphan } from '../../src/watchdog/watchdog.js';
import { stopAction } from '../../src/web/actions.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { create, errorOf, ledgerRepo } from './fixtures/ledger.js';

/**
 * A ledger is files a cloned repository can carry: a planted ACTIVE run's state.json names any pid
 * it likes. agentbox signals only the process a state records with its start time: never -1 (every
 * process of the person), 0 or 1, and never a pid whose start time is not recorded.
 */
describe('a planted state never gets a process of the person signalled', () => {
  let victim: ChildProcess | undefined;
  afterEach(() => {
    victim?.kill('SIGKILL');
    victim = undefined;
  });
  const someoneElse = () => {
    victim = spawn('sleep', ['30'], { stdio: 'ignore' });
    return victim.pid!;
  };
  const alive = (pid: number) => processStartTime(pid) !== null && victim?.exitCode === null;

  it.each([-1, 0, 1])('pid %i is never a live run (kill(-1, 0) succeeds: it looked alive)', (pid) => {
    expect(isAlive(pid, null)).toBe(false);
  });

  it("the page's Stop on a planted ACTIVE run naming another process (no start time): refused, it lives", async () => {
    const { repo, ledger } = ledgerRepo();
    const pid = someoneElse();
    const run = await create(ledger, 'fix a typo', '2026-03-01T10:00:00Z', { type: 'fix' });
    await updateState(ledger, run.name, { status: 'ACTIVE', pid, pid_start: null });
    const error = await errorOf(() => stopAction({ root: repo.dir, ledger, env: {} }, run.id));
    expect((error as Error).message).toMatch(/is not running/);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(pid)).toBe(true);
  });

  it("recovery's orphan check does not end a planted claude_pid without its start time", async () => {
    const { ledger } = ledgerRepo();
    const pid = someoneElse();
    const run = await create(ledger, 'fix a typo', '2026-03-01T10:00:00Z', { type: 'fix' });
    const state = { ...readRun(ledger, run.name).state!, claude_pid: pid, claude_pid_start: null };
    await endOrphan(state, 100);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(pid)).toBe(true);
  });

  it('agentbox start --resume of a planted session does not remove the file its socket_path names', async () => {
    const { repo, ledger } = ledgerRepo();
    const precious = path.join(repo.dir, '..', `${path.basename(repo.dir)}-notes.txt`);
    fs.writeFileSync(precious, 'mine\n');
    try {
      const run = await create(ledger, 'chat', '2026-03-01T10:00:00Z', { type: 'interactive' });
      await updateState(ledger, run.name, { status: 'CRASHED', session_id: 's-1', socket_path: precious });
      const rc = await loadRunContext({
        cwd: repo.dir,
        env: { ...GIT_ENV, PATH: process.env.PATH, HOME: repo.dir },
        io: memoryIo(),
      });
      await reopenRun(rc, run.id);
      expect(fs.readFileSync(precious, 'utf8')).toBe('mine\n');
    } finally {
      fs.rmSync(precious, { force: true });
    }
  });

  it('any agentbox command (the watchdog before it) does not remove the file a planted socket_path names', async () => {
    const { repo, ledger } = ledgerRepo();
    const precious = path.join(repo.dir, '..', `${path.basename(repo.dir)}-keep.txt`);
    fs.writeFileSync(precious, 'mine\n');
    try {
      const run = await create(ledger, 'chat', '2026-03-01T10:00:00Z', { type: 'interactive' });
      // ACTIVE, its supervisor gone: the watchdog marks it CRASHED and cleans up after it.
      await updateState(ledger, run.name, { status: 'ACTIVE', pid: 2 ** 22 + 7, socket_path: precious });
      const io = memoryIo();
      await runCli(['status'], { cwd: repo.dir, env: { ...GIT_ENV, HOME: repo.dir }, io });
      expect(readRun(ledger, run.name).state?.status).toBe('CRASHED');
      expect(fs.readFileSync(precious, 'utf8')).toBe('mine\n');
    } finally {
      fs.rmSync(precious, { force: true });
    }
  });
});
