import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/ledger/events.js';
import { type Ledger, type RunSummary, updateState } from '../../src/ledger/index.js';
import { processStartTime } from '../../src/process/reap.js';
import { mayResume } from '../../src/recover/decide.js';
import { RecoveryMemo } from '../../src/recover/memo.js';
import { decideRecoveries } from '../../src/recover/recover.js';
import { cleanupLater } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/git-repo.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

const offered = (run: RunSummary) => mayResume(run.status, run.failure_kind, run.type, run.ran_on);
const crash = {
  status: 'CRASHED',
  failure: { kind: 'crashed', message: 'claude exited with code 1' },
} as const;

/**
 * The memo's decisions next to a fresh read of every file (what `agentbox recover --dry-run`
 * decides): they must be the same. Returns the memo's, by run.
 */
async function decide(ledger: Ledger, env: Record<string, string>, memo: RecoveryMemo) {
  const kept = await decideRecoveries({ env }, { ledger }, undefined, false, offered, memo);
  const fresh = await decideRecoveries({ env }, { ledger }, undefined, false, offered);
  expect(kept.map((d) => [d.name, d.action])).toEqual(fresh.map((d) => [d.name, d.action]));
  return new Map(kept.map((d) => [d.name, d]));
}

/** runs/ as if last changed a minute ago: its stamp is kept (the memo's quick path). */
function settle(ledger: Ledger): void {
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(ledger.runsDir, past, past);
}

/** A process that stands for a run's supervisor, ended with the test. */
function supervisor() {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  cleanupLater(() => {
    child.kill('SIGKILL');
  });
  const ended = new Promise((resolve) => child.on('exit', resolve));
  const end = () => {
    child.kill('SIGKILL');
    return ended;
  };
  return { pid: child.pid!, start: processStartTime(child.pid!), end };
}

describe('RecoveryMemo: what the web UI asks on every page load', () => {
  it('decides as a fresh read does while runs crash, end, are recovered and resumed, with nothing read twice for nothing', async () => {
    const { ledger } = ledgerRepo();
    const env = { CLAUDE_CONFIG_DIR: tempDir('agentbox-claude-') };
    const memo = new RecoveryMemo();
    const replayed = (await create(ledger, 'replayed', '2025-06-01T10:00:00Z')).name;
    await updateState(ledger, replayed, crash);
    const discarded = (await create(ledger, 'discarded', '2025-06-01T10:01:00Z')).name;
    await updateState(ledger, discarded, crash);
    const running = (await create(ledger, 'running', '2025-06-01T10:02:00Z')).name;
    const alive = supervisor();
    await updateState(ledger, running, { status: 'ACTIVE', pid: alive.pid, pid_start: alive.start });
    const session = (await create(ledger, 'session', '2025-06-01T10:03:00Z')).name;
    await updateState(ledger, session, { ...crash, session_id: 'a-session' });
    settle(ledger);

    const first = await decide(ledger, env, memo);
    expect([...first].map(([name, d]) => [name, d.action.kind])).toEqual([
      [replayed, 'rollback_replay'],
      [discarded, 'rollback_replay'],
      [running, 'none'],
      [session, 'rollback_replay'],
    ]);
    // Nothing changed: the same decisions, not new ones.
    const again = await decide(ledger, env, memo);
    for (const [name, d] of first) expect(again.get(name)).toBe(d);

    // The supervisor dies (no file changes): the run can be taken up now.
    await alive.end();
    expect((await decide(ledger, env, memo)).get(running)?.action.kind).toBe('rollback_replay');

    // Its session's transcript appears (claude's folder, not the ledger): it can be resumed.
    const transcript = path.join(env.CLAUDE_CONFIG_DIR, 'projects', 'repo', 'a-session.jsonl');
    fs.mkdirSync(path.dirname(transcript), { recursive: true });
    fs.writeFileSync(transcript, `${JSON.stringify({ type: 'user', message: { content: 'hi' } })}\n`);
    expect((await decide(ledger, env, memo)).get(session)?.action.kind).toBe('resume');

    // Recovered three times by `agentbox recover`, each failing before the run's status changed:
    // only its events.jsonl says so (no INDEX.jsonl line, runs/ unchanged).
    settle(ledger);
    await decide(ledger, env, memo);
    const events = new EventLog(path.join(ledger.runsDir, replayed));
    for (let i = 0; i < 3; i++)
      events.append({ event: 'recover', action: 'rollback_replay', reason: 'test' });
    expect((await decide(ledger, env, memo)).get(replayed)?.action.kind).toBe('give_up');

    // Discarded: no longer one to recover. A new crash: one more.
    await updateState(ledger, discarded, { status: 'DISCARDED' });
    const fresh = (await create(ledger, 'crashed later', '2025-06-01T10:04:00Z')).name;
    await updateState(ledger, fresh, crash);
    const last = await decide(ledger, env, memo);
    expect(last.has(discarded)).toBe(false);
    expect(last.get(fresh)?.action.kind).toBe('rollback_replay');
  });
});
