import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/ledger/events.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { processStartTime } from '../../src/process/reap.js';
import { resumeBlocker } from '../../src/run/resume.js';
import { tempDir } from '../helpers/git-repo.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

/*
 * A run stopped before claude saved its conversation (ABORTED 0.4 s in): `claude --resume` of its
 * session exits 1 ("No conversation found"), and the run ended CRASHED with an empty reason, no
 * event saying why (found by a user's eye). resume replays its task in a new session instead.
 */
describe('resume of an ABORTED run whose session has no conversation', () => {
  it('is a replay of its task (its worktree as it is), recorded; one with a conversation resumes it', async () => {
    const { ledger } = ledgerRepo();
    const made = await create(ledger, 'add x', '2026-03-01T10:00:00Z');
    await updateState(ledger, made.name, {
      status: 'ABORTED',
      session_id: '42e8d3da-0000-4000-8000-000000000000',
      failure: { kind: 'killed', message: 'stopped by agentbox stop' },
    });
    const config = tempDir('agentbox-claude-config-');
    const env = { CLAUDE_CONFIG_DIR: config, HOME: config };
    const action = await resumeBlocker(readRun(ledger, made.name), env);
    expect(action).toMatchObject({ kind: 'rollback_replay', to: null });
    expect(action!.reason).toContain('its session has no conversation to resume');
    expect(new EventLog(made.dir).read().at(-1)).toMatchObject({
      event: 'recover',
      action: 'rollback_replay',
      via: 'resume',
    });
    // Its conversation saved: a plain resume, as before.
    const project = path.join(config, 'projects', 'p');
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(
      path.join(project, '42e8d3da-0000-4000-8000-000000000000.jsonl'),
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'add x' } })}\n`,
    );
    expect(await resumeBlocker(readRun(ledger, made.name), env)).toBeNull();
  });
});

describe('resume of a STALLED run whose supervisor lives', () => {
  it('says to end it with stop --force (a stopped process ignores the plain kill it named)', async () => {
    const { ledger } = ledgerRepo();
    const made = await create(ledger, 'add x', '2026-03-01T10:00:00Z');
    await updateState(ledger, made.name, {
      status: 'STALLED',
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      failure: { kind: 'stalled', message: 'no heartbeat' },
    });
    const error = await resumeBlocker(readRun(ledger, made.name), {}).catch((e: unknown) => e);
    expect(error).toMatchObject({
      message: `run ${made.name} is still running (pid ${process.pid})`,
      hint: `its supervisor is alive but has not reported for a while; end it first: agentbox stop --force ${made.id}`,
    });
  });
});
