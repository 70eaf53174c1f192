import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { memoryIo } from '../../src/context.js';
import { AgentboxError } from '../../src/errors.js';
import { STOP_SIGNAL } from '../../src/gate/signals.js';
import {
  awaitStop,
  requestStop,
  type StopOutcome,
  stopExitCode,
  stoppedLine,
  stoppingLine,
} from '../../src/gate/stop.js';
import { type RunDetails, readRun, updateState } from '../../src/ledger/index.js';
import { processStartTime } from '../../src/process/reap.js';
import { styler } from '../../src/util/style.js';
import { create, errorOf, idSequence, ledgerRepo } from './fixtures/ledger.js';

const PLAIN = styler(memoryIo());

describe('stop (src/gate/stop.ts)', () => {
  it('refuses a run that is not running, naming the next command', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('aaaaaa') });
    await updateState(ledger, run, { status: 'DONE' });
    const error = (await errorOf(() => requestStop(readRun(ledger, run.name)))) as AgentboxError;
    expect(error).toBeInstanceOf(AgentboxError);
    expect(error.message).toBe(`run ${run.name} is not running (DONE)`);
    expect(error.hint).toBe('see it with agentbox show aaaaaa');
  });

  it('a fetched run that claims ACTIVE runs elsewhere: refused as such, nothing signalled (it said "not running (ACTIVE)")', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('cccccc') });
    // (a live pid of this machine's, which a publication may name: never signalled)
    await updateState(ledger, run, {
      status: 'ACTIVE',
      pid: process.pid,
      pid_start: processStartTime(process.pid),
    });
    const fetched: RunDetails = {
      ...readRun(ledger, run.name),
      meta: { ...readRun(ledger, run.name).meta, origin: { remote: 'origin', host: 'ci-7', run: run.name } },
    } as RunDetails;
    const error = (await errorOf(() => requestStop(fetched))) as AgentboxError;
    expect(error.message).toBe(`run ${run.name} runs on ci-7, not here: it cannot be stopped from here`);
    expect(error.hint).toBe('stop it there; agentbox fetch origin brings how it ended');
  });

  it('asks the run by its signal; with force, kills one that does not end: "gone", exit 0', async () => {
    const { ledger } = ledgerRepo();
    const handle = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('bbbbbb') });
    // A run process that takes the signal and never ends.
    const child = spawn(
      process.execPath,
      ['-e', `process.on('${STOP_SIGNAL}', () => {}); setInterval(() => {}, 1000)`],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    try {
      const pid = child.pid!;
      await updateState(ledger, handle, { pid, pid_start: processStartTime(pid) });
      const run = readRun(ledger, handle.name);
      expect(await requestStop(run)).toBe(pid);
      const outcome = await awaitStop(run, pid, { force: true, graceMs: 100, waitMs: 10_000 });
      expect(outcome).toEqual({ kind: 'gone', killed: true });
      expect(await exited).toBe('SIGKILL');
      expect(stopExitCode(outcome)).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("with force, kills the run's claude too: a run served by a resident agentbox has its client as its process", async () => {
    const { ledger } = ledgerRepo();
    const handle = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('cccccc') });
    const stubborn = () =>
      spawn(process.execPath, ['-e', `process.on('${STOP_SIGNAL}', () => {}); setInterval(() => {}, 1000)`], {
        stdio: 'ignore',
      });
    // The client (the run's process) and the claude the resident agentbox runs for it.
    const client = stubborn();
    const claude = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"],
      {
        stdio: 'ignore',
      },
    );
    // Killed however the test ends (one that times out never reaches its finally).
    onTestFinished(() => {
      client.kill('SIGKILL');
      claude.kill('SIGKILL');
    });
    const ended = (child: typeof client) =>
      new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const [clientEnded, claudeEnded] = [ended(client), ended(claude)];
    try {
      await updateState(ledger, handle, {
        pid: client.pid!,
        pid_start: processStartTime(client.pid!),
        claude_pid: claude.pid!,
        claude_pid_start: processStartTime(claude.pid!),
      });
      const run = readRun(ledger, handle.name);
      const pid = await requestStop(run);
      expect(await awaitStop(run, pid, { force: true, graceMs: 100, waitMs: 10_000 })).toEqual({
        kind: 'gone',
        killed: true,
      });
      expect(await clientEnded).toBe('SIGKILL');
      expect(await claudeEnded).toBe('SIGKILL');
    } finally {
      client.kill('SIGKILL');
      claude.kill('SIGKILL');
    }
  });

  const run = { name: 'r', meta: { run_id: 'abc123' } } as RunDetails;
  it.each<[string, StopOutcome, string, number]>([
    [
      'ended',
      { kind: 'ended', status: 'ABORTED', failure: { kind: 'killed', message: 'stopped' } },
      '✓ r — ABORTED (killed): stopped\n  next: agentbox show abc123\n',
      0,
    ],
    [
      'gone by itself',
      { kind: 'gone', killed: false },
      '! r: its process is gone; agentbox status marks it and agentbox resume abc123 finishes it\n',
      1,
    ],
  ])('says how it ended: %s', (_name, outcome, line, code) => {
    expect(stoppingLine(run, 42)).toBe('stopping r (pid 42) …\n');
    expect(stoppedLine(run, outcome, PLAIN)).toBe(line);
    expect(stopExitCode(outcome)).toBe(code);
  });
});
