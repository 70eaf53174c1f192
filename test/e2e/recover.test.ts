import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';

const SUPERVISOR = 'You supervise a Claude Code agent';
const HANG = { text: 'never', delayMs: 120_000 };

describe('recovery after the supervisor dies, on the real Claude Code', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  /** Starts `agentbox <args>` in the background; returns its pid and exit. */
  const background = (args: string[]) => {
    const child = spawn(process.execPath, [AGENTBOX_BIN, ...args], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    return { pid: child.pid!, exited: new Promise<void>((resolve) => child.on('close', () => resolve())) };
  };

  it('kill -9 of agentbox mid-run: the watchdog ends the orphaned claude, recover resumes the same session', async () => {
    const task = 'write one file';
    const worker = (r: RequestView) => !r.allText.includes(SUPERVISOR) && r.allText.includes(task);
    p.server.setRules([
      {
        when: { lastUserText: 'Continue the task where you left off' },
        reply: text('Finished after recovery.'),
      },
      { when: { turn: 0, predicate: worker }, reply: bash('echo one > one.txt') },
      { when: { turn: 1, predicate: worker }, reply: HANG },
    ]);
    const run = background(['fix', task]);
    await waitFor(() => p.server.requests.some((r) => r.view.turn === 1 && worker(r.view)), 'turn 1');
    const name = p.newest();
    const before = p.state(name);
    process.kill(run.pid, 'SIGKILL');
    await run.exited;

    const first = p.server.requests.length;
    const result = await p.agentbox(['recover', '--json']);
    expect(result.stderr).toContain(
      `agentbox: watchdog: run ${name} is CRASHED: the supervisor (pid ${run.pid}) is gone; its orphaned claude (pid ${before.claude_pid}) was ended`,
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).runs).toEqual([
      {
        run: name,
        action: 'resume',
        reason: 'its session and files are consistent: it goes on where it stopped',
        status: 'REVIEW',
      },
    ]);
    const after = p.state(name);
    expect(after.session_id).toBe(before.session_id);
    // The resumed claude sent the conversation from before the crash.
    const resumed = p.server.requests.slice(first).find((r) => r.view.allText.includes('Continue the task'))!;
    expect(resumed.view.sessionId).toBe(before.session_id);
    expect(JSON.stringify(resumed.view.body.messages)).toContain('echo one > one.txt');
    expect(p.read(name, 'changes.patch')).toContain('+one');
    expect(p.events(name).filter((e) => e.event === 'recover')).toMatchObject([{ action: 'resume' }]);
    await expectNoProcessesLeft(p.tag);

    // Run again, recover finds nothing stale; the REVIEW run waits for the human gate.
    const again = await p.agentbox(['recover']);
    expect(again.stdout).toBe(
      `${name}: keeps waiting — its changes wait for you: agentbox merge or agentbox discard\n`,
    );
  }, 120_000);

  it('a crash that left git half-done: resume rolls the worktree back to the last checkpoint and replays the task', async () => {
    const task = 'write two files';
    const worker = (r: RequestView) => !r.allText.includes(SUPERVISOR) && r.allText.includes(task);
    const replay = (r: RequestView) => worker(r) && r.allText.includes('cut off by a crash');
    p.server.setRules([
      {
        name: 'supervisor',
        when: { anyText: SUPERVISOR },
        reply: (r) =>
          r.allText.includes('FIRST-DONE')
            ? text('[CONTINUE] now write two.txt')
            : text('[COMPLETE] both files written'),
      },
      { when: { turn: 0, predicate: replay }, reply: bash('echo two-again > two.txt') },
      { when: { turn: 1, predicate: replay }, reply: text('REPLAY-DONE') },
      { when: { turn: 0, predicate: worker }, reply: bash('echo one > one.txt') },
      { when: { turn: 1, predicate: worker }, reply: text('FIRST-DONE') },
      { when: { lastUserText: 'now write two.txt', predicate: worker }, reply: bash('echo two > two.txt') },
      { when: { turn: 3, predicate: worker }, reply: HANG },
    ]);
    const run = background(['fix', task, '--supervisor', 'claude']);
    await waitFor(() => p.server.requests.some((r) => r.view.turn === 3 && worker(r.view)), 'turn 3');
    const name = p.newest();
    const before = p.state(name);
    // The checkpoint was taken when the first turn ended: one.txt, not yet two.txt.
    expect(before.checkpoint).toMatchObject({ iteration: 0 });
    const wt: string = before.worktree_path;
    expect(fs.readFileSync(path.join(wt, 'two.txt'), 'utf8')).toBe('two\n');
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    // As if git had been killed in the middle of writing the index.
    const gitDir = execFileSync('git', ['rev-parse', '--absolute-git-dir'], {
      cwd: wt,
      encoding: 'utf8',
    }).trim();
    fs.writeFileSync(path.join(gitDir, 'index.lock'), '');

    const result = await p.agentbox(['resume', name]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `${name} cannot be resumed as it is: in its worktree git left index.lock behind: its worktree goes back to the last checkpoint and the task is replayed in a new session`,
    );
    const after = p.state(name);
    expect(after.status).toBe('REVIEW');
    expect(after.session_id).not.toBe(before.session_id);
    expect(fs.existsSync(path.join(gitDir, 'index.lock'))).toBe(false);
    const patch = p.read(name, 'changes.patch');
    expect(patch).toContain('+one');
    expect(patch).toContain('+two-again');
    expect(patch).not.toMatch(/^\+two$/m);
    const replayed = p.server.requests.find((r) => replay(r.view))!;
    expect(replayed.view.lastUserText).toContain(
      'Your worktree has been restored to its state at the end of your last completed turn',
    );
    expect(p.events(name).filter((e) => e.event === 'recover')).toMatchObject([
      { action: 'rollback_replay', via: 'resume' },
    ]);
    await expectNoProcessesLeft(p.tag);
  }, 120_000);
});
