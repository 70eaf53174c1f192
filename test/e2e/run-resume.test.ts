import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

const waitFor = async (check: () => boolean, what: string, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('resume on the real Claude Code', () => {
  let p: Project;
  let crashed: string;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('after claude is killed, resume continues the same conversation', async () => {
    const task = 'long investigation';
    p.server.setRules([
      { when: { turn: 0, anyText: task }, reply: bash('echo MARKER-FROM-TURN-0') },
      // Turn 1 of the first attempt never answers; claude is killed while it waits.
      {
        when: { turn: 1, anyText: task, lastUserText: 'MARKER-FROM-TURN-0' },
        reply: { text: 'never', delayMs: 120_000 },
      },
      { when: { anyText: 'please wrap up' }, reply: text('Wrapped up after the resume.') },
    ]);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'scout', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)),
      'turn 1',
    );
    crashed = p.newest();
    const { claude_pid: claudePid, session_id: sessionId } = p.state(crashed);
    expect(claudePid).toBeGreaterThan(0);
    process.kill(claudePid, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(p.state(crashed)).toMatchObject({ status: 'CRASHED', failure: { kind: 'killed' } });

    const first = p.server.requests.length;
    const resumed = await p.agentbox(['resume', crashed, 'please wrap up']);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const request = p.server.requests.slice(first).find((r) => r.view.allText.includes('please wrap up'))!;
    // Same session, and the model server sees the earlier turns: the first prompt and the tool
    // call of turn 0 (whose result Claude Code marks as interrupted: claude died before recording it).
    expect(request.view.sessionId).toBe(sessionId);
    const conversation = JSON.stringify(request.view.body.messages);
    expect(conversation).toContain(`<!-- agentbox: scout task (verbatim from the user) -->\\n${task}`);
    expect(conversation).toContain('echo MARKER-FROM-TURN-0');
    expect(request.view.turn).toBeGreaterThanOrEqual(1);
    const state = p.state(crashed);
    expect(state).toMatchObject({ status: 'DONE', session_id: sessionId, failure: null });
    expect(p.read(crashed, 'report.md')).toContain('Wrapped up after the resume.');
    // One stream log for the whole run: both sessions' init lines are in it.
    const inits = p
      .read(crashed, 'raw/stream.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'system' && e.subtype === 'init');
    expect(inits.map((e) => e.session_id)).toEqual([sessionId, sessionId]);
    // Each init is logged as the session's start, the second as a resume (as Claude Code's hook says).
    const starts = p.events(crashed).filter((e) => e.event === 'SessionStart');
    expect(starts.map((e) => [e.session_id, e.source])).toEqual([
      [sessionId, 'startup'],
      [sessionId, 'resume'],
    ]);
  });

  it('refuses a run that is not CRASHED, ABORTED or STALLED', async () => {
    const done = await p.agentbox(['resume', crashed]);
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('is DONE; only CRASHED, ABORTED or STALLED runs can be resumed');
  });

  it('refuses when the envelope changed since the run started, unless --force', async () => {
    const task = 'second investigation';
    p.server.setRules([
      { when: { turn: 0, anyText: task }, reply: bash('echo ok') },
      { when: { turn: 1, anyText: task, lastUserText: 'ok' }, reply: { text: 'never', delayMs: 120_000 } },
      { when: { anyText: 'Continue the task' }, reply: text('Continued.') },
    ]);
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'scout', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)),
      'turn 1',
    );
    const name = p.newest();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(p.state(name).status).toBe('ABORTED');

    const config = path.join(p.repo.dir, 'agentbox.yaml');
    const original = fs.readFileSync(config, 'utf8');
    fs.writeFileSync(config, original.replace(/^ {2}model:.*$/m, '  model: claude-other-model'));
    const refused = await p.agentbox(['resume', name]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `the envelope of ${name} changed since it started: model was null, now "claude-other-model"`,
    );
    expect(refused.stderr).toContain('--force');
    expect(p.state(name).status).toBe('ABORTED');

    const forced = await p.agentbox(['resume', name, '--force']);
    expect(forced.code).toBe(0);
    const state = p.state(name);
    expect(state.status).toBe('DONE');
    // The run resumed in its recorded envelope: no --model, as meta.yaml says.
    const lastRequest = p.server.requests.at(-1)!;
    expect(lastRequest.view.model).not.toBe('claude-other-model');
    fs.writeFileSync(config, original);
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
