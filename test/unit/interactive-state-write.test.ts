import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../src/interactive/log.js';
import { InteractiveSession } from '../../src/interactive/session.js';
import { writeState } from '../../src/interactive/state-write.js';
import { type Ledger, type RunHandle, readState } from '../../src/ledger/index.js';
import { create, ledgerRepo, scratchDir } from './fixtures/ledger.js';

/** A real run in a real ledger, and a session log outside the run's folder (which a test removes). */
async function interactiveRun(): Promise<{
  ledger: Ledger;
  run: RunHandle;
  log: SessionLog;
  logText: () => string;
}> {
  const { ledger } = ledgerRepo();
  const run = await create(ledger, 'a session', '2026-11-24T10:00:00.000Z', { type: 'interactive' });
  const file = path.join(scratchDir(), 'supervisor.log');
  const logText = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
  return { ledger, run, log: new SessionLog(file), logText };
}

const SID = '11111111-2222-3333-4444-555555555555';

describe('the state writes of an interactive session', () => {
  it('a write that lands leaves no trace; one that fails is logged with what it was, and never thrown', async () => {
    const { ledger, run, log, logText } = await interactiveRun();
    const target = { ledger, runName: run.name, log };
    await writeState(target, 'session_id', { session_id: SID });
    expect(readState(run.dir)?.session_id).toBe(SID);
    expect(logText()).toBe('');

    fs.rmSync(run.dir, { recursive: true });
    await expect(writeState(target, 'session_id', { session_id: 'another' })).resolves.toBeUndefined();
    expect(logText()).toMatch(
      new RegExp(
        `^\\[\\d{10}\\] \\[supervisor\\] state_write_failed what=session_id error="run ${run.name} has no state\\.json in .*"\\n$`,
      ),
    );
  });

  it('the session goes on when a write fails (its run folder removed under it), and the log says so', async () => {
    const { ledger, run, log, logText } = await interactiveRun();
    const session = new InteractiveSession({
      ledger,
      meta: run.meta,
      claudeBin: 'claude',
      claudeConfigDir: scratchDir(),
      cwd: ledger.root,
      cwdSource: 'repo_root',
      terminal: {} as never,
      policy: {} as never,
      log,
      launch: () => ({ args: [], env: {} }),
      askRestart: async () => false,
      spawnPty: () => {
        throw new Error('no pty in this test');
      },
    });
    const none = async () => ({});
    // Claude Code moves to a new conversation: the session adopts its id and writes it down.
    await session.onHook(none, 'SessionStart', { session_id: SID, source: 'startup' });
    await expect.poll(() => readState(run.dir)?.session_id).toBe(SID);
    expect(logText()).not.toContain('state_write_failed');

    fs.rmSync(run.dir, { recursive: true });
    const next = '66666666-7777-8888-9999-000000000000';
    await session.onHook(none, 'SessionStart', { session_id: next, source: 'clear' });
    expect(session.state().session_id).toBe(next);
    await expect.poll(logText).toContain('state_write_failed what=session_id error=');
  });
});
