import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionLog } from '../../src/interactive/log.js';
import { InteractiveSession } from '../../src/interactive/session.js';

/**
 * Issue 14 item 11, the compaction half. The real CLI would not compact in the middle of a turn
 * here (CLAUDE_CODE_AUTO_COMPACT_WINDOW and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE with a reported usage
 * over the line did not trigger it in 2.1.330), so the session's hook side is driven with the
 * payload sequence Claude Code sends: SessionStart(startup), UserPromptSubmit, SessionStart(compact)
 * with the same session id, Stop.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-session-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function session() {
  const log = path.join(dir, `log-${Math.random()}`);
  return new InteractiveSession({
    ledger: { root: dir, dir, runsDir: dir } as never,
    meta: { run_name: '26-11-24_1000__x__a1b2c3', run_id: 'a1b2c3' } as never,
    claudeBin: 'claude',
    claudeConfigDir: dir,
    cwd: dir,
    cwdSource: 'repo_root',
    terminal: {} as never,
    policy: {} as never,
    log: new SessionLog(log),
    launch: () => ({ args: [], env: {} }),
    askRestart: async () => false,
    spawnPty: () => {
      throw new Error('no pty in this test');
    },
  });
}

// The session's own timers and clock are driven from here: a slow machine cannot move them.
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});
/** Moves the session's clock on, running the timers that fall due (and what they await). */
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);
const none = async () => ({});
const SID = '11111111-2222-3333-4444-555555555555';

describe('interactive session: hooks and compaction', () => {
  it('a compaction mid-turn keeps the session busy until the turn’s Stop', async () => {
    const s = session();
    await s.onHook(none, 'SessionStart', { session_id: SID, source: 'startup' });
    await sleep(700); // claude is still drawing its prompt
    expect(s.state().idle).toBe(false);
    await sleep(400); // ready after start: idle
    expect(s.state().idle).toBe(true);
    await s.onHook(none, 'UserPromptSubmit', { session_id: SID, prompt: 'a long task' });
    expect(s.state().idle).toBe(false);
    await s.onHook(none, 'SessionStart', { session_id: SID, source: 'compact' });
    await sleep(5000); // what a SessionStart used to turn into "idle", and long after
    expect(s.state().idle).toBe(false);
    await s.onHook(none, 'Stop', { session_id: SID, stop_hook_active: false });
    expect(s.state().idle).toBe(true);
  });

  it('a compaction while idle (the person typed /compact) leaves it idle once claude is ready', async () => {
    const s = session();
    await s.onHook(none, 'SessionStart', { session_id: SID, source: 'startup' });
    await sleep(1100);
    await s.onHook(none, 'SessionStart', { session_id: SID, source: 'compact' });
    await sleep(1100);
    expect(s.state().idle).toBe(true);
  });
});
