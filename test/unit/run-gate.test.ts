import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../src/cli/context.js';
import { AgentboxError } from '../../src/errors.js';
import { processStartTime } from '../../src/process/reap.js';
import { EventLog } from '../../src/run/events.js';
import { assertHuman, commitMessage, isAlive } from '../../src/run/gate.js';
import { tempDir } from '../helpers/git-repo.js';

const NAME = '26-01-02_0304__fix-the-login__0a1b2c';

describe('assertHuman', () => {
  it.each<[string, Env, RegExp]>([
    ['inside an agentbox run', { AGENTBOX_RUN: NAME }, new RegExp(`inside agentbox run ${NAME}$`)],
    ['inside Claude Code', { CLAUDECODE: '1' }, /inside a Claude Code session$/],
    // The run is the more precise answer when both are set (claude inside agentbox).
    ['inside both', { CLAUDECODE: '1', AGENTBOX_RUN: NAME }, new RegExp(`inside agentbox run ${NAME}$`)],
  ])('refuses %s and names it', (_name, env, message) => {
    let error: unknown;
    try {
      assertHuman({ PATH: '/usr/bin', ...env }, 'merge');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentboxError);
    const gate = error as AgentboxError;
    expect(gate.code).toBe('HUMAN_GATE');
    expect(gate.message).toMatch(/^agentbox merge is the human gate and does not run /);
    expect(gate.message).toMatch(message);
    expect(gate.hint).toBe('run it yourself in a terminal: agentbox merge <run>');
    expect(gate.exitCode).toBe(1);
  });

  it('records the refusal in the events of the run that tried it', () => {
    const runDir = tempDir('agentbox-gate-');
    try {
      const env = { AGENTBOX_RUN: NAME, AGENTBOX_RUN_DIR: runDir };
      expect(() => assertHuman(env, 'merge')).toThrow(AgentboxError);
      expect(() => assertHuman(env, 'discard')).toThrow(AgentboxError);
      const events = new EventLog(runDir).read();
      expect(events.map(({ ts: _ts, ...rest }) => rest)).toEqual([
        {
          event: 'human_gate_refused',
          command: 'merge',
          reason: expect.stringMatching(/^agentbox merge is/),
        },
        {
          event: 'human_gate_refused',
          command: 'discard',
          reason: expect.stringMatching(/^agentbox discard is/),
        },
      ]);
      // A person's shell with AGENTBOX_RUN_DIR left over writes nothing.
      assertHuman({ AGENTBOX_RUN_DIR: runDir }, 'merge');
      expect(new EventLog(runDir).read()).toHaveLength(2);
    } finally {
      fs.rmSync(runDir, { recursive: true, force: true });
    }
  });

  it.each(['merge', 'discard', 'resume'])('names the command it guards: %s', (command) => {
    expect(() => assertHuman({ CLAUDECODE: '1' }, command)).toThrow(`agentbox ${command} is the human gate`);
  });

  it.each<[string, Env]>([
    ['an empty environment', {}],
    ['an ordinary shell', { PATH: '/usr/bin', HOME: '/home/me', TERM: 'xterm' }],
    [
      'variables with similar names',
      { AGENTBOX_RUN_DIR: '/x', CLAUDE_CODE_ENTRYPOINT: 'cli', AGENTBOX: '1' },
    ],
    ['variables set to undefined', { AGENTBOX_RUN: undefined, CLAUDECODE: undefined }],
  ])('passes in %s', (_name, env) => {
    expect(() => assertHuman(env, 'merge')).not.toThrow();
  });
});

describe('commitMessage', () => {
  const subject = (task: string) => commitMessage(NAME, task).split('\n')[0]!;

  it('a short task: subject, the run, and the task in the body', () => {
    expect(commitMessage(NAME, 'fix the login')).toBe(
      `fix the login\n\nMerged from agentbox run ${NAME}.\n\nTask:\nfix the login\n`,
    );
  });

  it.each<[string, string, string]>([
    ['exactly 72 characters stays whole', 'a'.repeat(72), 'a'.repeat(72)],
    ['73 characters are cut to 71 and an ellipsis', 'b'.repeat(73), `${'b'.repeat(71)}…`],
    ['a multi-line task: its first line', 'first line\nsecond line\nthird', 'first line'],
    ['leading blank lines and spaces are skipped', '\n\n   fix it  \nmore', 'fix it'],
    ['a CRLF task: no carriage return in the subject', 'fix it\r\nmore detail', 'fix it'],
    ['astral characters are never cut in half', `${'a'.repeat(70)}😀😀😀`, `${'a'.repeat(70)}😀…`],
  ])('%s', (_name, task, expected) => {
    expect(subject(task)).toBe(expected);
  });

  it.each([
    ['ascii', 'x'.repeat(300)],
    ['emoji', '😀'.repeat(100)],
    ['mixed', `${'é'.repeat(50)}${'😀'.repeat(50)}`],
    ['CJK', '修'.repeat(90)],
  ])('the subject is at most 72 characters and well-formed: %s', (_name, task) => {
    const first = subject(task);
    expect([...first].length).toBeLessThanOrEqual(72);
    // A lone surrogate does not survive the way to git (UTF-8) unchanged.
    expect(Buffer.from(first, 'utf8').toString('utf8')).toBe(first);
    expect(first.endsWith('…')).toBe(true);
  });

  it('the body carries the full task, trimmed', () => {
    const task = `  ${'long first line '.repeat(10)}\nstep 1: do this\nstep 2: "a; rm -rf ~"\n\n`;
    const message = commitMessage(NAME, task);
    expect(message.endsWith(`\n\nTask:\n${task.trim()}\n`)).toBe(true);
    expect(message).toContain(`\n\nMerged from agentbox run ${NAME}.\n\n`);
  });
});

describe('isAlive', () => {
  const ownStart = processStartTime(process.pid);

  it('this process is alive, with or without its start time', () => {
    expect(ownStart).toMatch(/^\d+$/);
    expect(isAlive(process.pid, ownStart)).toBe(true);
    expect(isAlive(process.pid, null)).toBe(true);
  });

  it('this process with another start time is not (its pid was reused)', () => {
    expect(isAlive(process.pid, String(Number(ownStart) + 1))).toBe(false);
    expect(isAlive(process.pid, '0')).toBe(false);
  });

  it('a process that has exited is not', async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    const pid = child.pid!;
    const start = processStartTime(pid);
    await once(child, 'exit');
    expect(isAlive(pid, start)).toBe(false);
    expect(isAlive(pid, null)).toBe(false);
  });

  it('no pid is not alive', () => {
    expect(isAlive(null, null)).toBe(false);
    expect(isAlive(0, null)).toBe(false);
  });

  it('a process of another user (pid 1) counts by its start time', () => {
    // kill(1, 0) fails with EPERM for an unprivileged user and succeeds for root: alive both ways.
    const start = processStartTime(1);
    expect(isAlive(1, start)).toBe(true);
  });
});
