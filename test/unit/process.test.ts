import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type OwnedChild, spawnOwned } from '../../src/process/owned.js';
import { killMarked, MARK_VAR, markedProcesses, processStartTime } from '../../src/process/reap.js';
import { tempDir } from '../helpers/git-repo.js';

// Real processes: this is process management. `sh -c` scripts stand in for claude and its tools.
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const started: OwnedChild[] = [];
const strays: number[] = [];

function owned(script: string, onStdout?: (chunk: Buffer) => void): OwnedChild {
  const child = spawnOwned('sh', ['-c', script], { cwd: '/', env: ENV, ...(onStdout ? { onStdout } : {}) });
  started.push(child);
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, probe: () => T | undefined | false, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Field 6 of /proc/<pid>/stat: the session id. */
function sessionOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

function alive(pid: number): boolean {
  try {
    // A zombie still answers kill(0); its state is Z.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

afterEach(async () => {
  // Every test proves it left nothing running; the kill is only a safety net for a failed one.
  const leftovers: number[] = [];
  for (const child of started.splice(0)) {
    const gone = await waitFor(
      'the marked processes to end',
      () => markedProcesses(child.mark).length === 0,
      3000,
    )
      .then(() => true)
      .catch(() => false);
    if (!gone) leftovers.push(...markedProcesses(child.mark));
    killMarked(child.mark);
  }
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  expect(leftovers).toEqual([]);
});

describe('spawnOwned', () => {
  it('streams stdout chunk by chunk while the process runs, and reports the exit', async () => {
    const chunks: string[] = [];
    const child = owned('echo one; sleep 0.3; echo two', (chunk) => chunks.push(chunk.toString()));
    expect(child.pid).toBeGreaterThan(0);
    await waitFor('the first line', () => chunks.join('') === 'one\n');
    // The second line is not there yet: output arrives as it is written, not at the end.
    expect(chunks.join('')).toBe('one\n');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(chunks.join('')).toBe('one\ntwo\n');
  });

  it('passes arguments as an array (no shell parses them) and marks the environment', async () => {
    let out = '';
    const task = 'fix "a; rm -rf ~" $(whoami) `id`';
    const child = spawnOwned(
      'sh',
      ['-c', 'printf "%s|" "$1" "$#"; printf "%s" "$AGENTBOX_PROCESS_MARK"', 'sh', task],
      { cwd: '/', env: ENV, onStdout: (c) => (out += c.toString()) },
    );
    started.push(child);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(out).toBe(`${task}|1|${child.mark}`);
    expect(child.mark).toMatch(/^[0-9a-f]{16}$/);
    expect(MARK_VAR).toBe('AGENTBOX_PROCESS_MARK');
  });

  it('reports the exit code and stderr', async () => {
    let err = '';
    const child = spawnOwned('sh', ['-c', 'echo oops >&2; exit 3'], {
      cwd: '/',
      env: ENV,
      onStderr: (c) => (err += c.toString()),
    });
    started.push(child);
    expect(await child.exited).toEqual({ code: 3, signal: null });
    expect(err).toBe('oops\n');
  });

  it('reports a command that cannot be started', async () => {
    const child = spawnOwned('/nonexistent/agentbox-no-such-claude', [], { cwd: '/', env: ENV });
    started.push(child);
    const exit = await child.exited;
    expect(exit.code).toBeNull();
    expect(exit.spawnError).toMatch(/ENOENT/);
  });

  it('runs the child in a new process group and session of its own', async () => {
    const child = owned('sleep 30');
    const pid = child.pid!;
    expect(sessionOf(pid)).toBe(pid);
    expect(sessionOf(pid)).not.toBe(sessionOf(process.pid));
    await child.stop(1000);
  });
});

describe('stop', () => {
  it('ends a cooperative process with SIGTERM, at once', async () => {
    const child = owned('sleep 30');
    await waitFor('the child to run', () => markedProcesses(child.mark).length > 0);
    const t0 = Date.now();
    expect(await child.stop(5000)).toEqual({ code: null, signal: 'SIGTERM' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('kills a process that ignores SIGTERM with SIGKILL after the grace period', async () => {
    let out = '';
    const child = owned("trap '' TERM; echo ready; sleep 30; echo survived", (c) => (out += c.toString()));
    // Wait until the trap is set: before that, SIGTERM would still end sh.
    await waitFor('the trap', () => out === 'ready\n');
    const t0 = Date.now();
    const exit = await child.stop(400);
    const took = Date.now() - t0;
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(3000);
    expect(out).toBe('ready\n');
  });

  it('is safe to call twice, and after the process ended', async () => {
    const child = owned('sleep 30');
    const first = child.stop(1000);
    const second = child.stop(1000);
    expect(second).toBe(first);
    expect(await first).toEqual({ code: null, signal: 'SIGTERM' });

    const done = owned('true');
    expect(await done.exited).toEqual({ code: 0, signal: null });
    expect(await done.stop(1000)).toEqual({ code: 0, signal: null });
  });

  it('ends the whole process group, grandchildren included', async () => {
    const child = owned('sleep 30 & sleep 30 & wait');
    const pids = await waitFor('three processes', () => {
      const found = markedProcesses(child.mark);
      return found.length === 3 && found;
    });
    await child.stop(1000);
    await waitFor('the group to be gone', () => pids.every((pid) => !alive(pid)));
  });
});

describe('descendants that leave the process group', () => {
  it('a grandchild in a new session is found by its mark and killed when the leader exits', async () => {
    // The leader exits when the test has seen the grandchild (a fixed sleep lost that race on a
    // loaded machine: the leader was gone, and its grandchild with it, before the first look).
    const go = path.join(tempDir('agentbox-owned-'), 'go');
    const child = owned(`(setsid sleep 300 &); while [ ! -e '${go}' ]; do sleep 0.05; done`);
    // The leader's own short sleeps come and go while it waits: one gone between the listing and
    // the look at its session is not the grandchild.
    const escapedFrom = (pid: number) => {
      try {
        return sessionOf(pid) !== child.pid;
      } catch {
        return false;
      }
    };
    const escaped = await waitFor('the grandchild in its own session', () =>
      markedProcesses(child.mark).find((pid) => pid !== child.pid && escapedFrom(pid)),
    );
    expect(sessionOf(escaped)).toBe(escaped);
    expect(alive(escaped)).toBe(true);
    fs.writeFileSync(go, '');
    // It holds the leader's stdout open: the exit must not wait for it.
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await waitFor('the grandchild to be killed', () => !alive(escaped));
    expect(markedProcesses(child.mark)).toEqual([]);
  });

  it('stop() also kills a grandchild in a new session', async () => {
    const child = owned('(setsid sleep 300 &); sleep 30');
    // The subshell that starts it exits at once: a pid listed a moment ago may be gone (ENOENT).
    const escapedFrom = (pid: number) => {
      try {
        return sessionOf(pid) !== child.pid;
      } catch {
        return false;
      }
    };
    const escaped = await waitFor('the grandchild in its own session', () =>
      markedProcesses(child.mark).find((pid) => pid !== child.pid && escapedFrom(pid)),
    );
    expect(await child.stop(1000)).toEqual({ code: null, signal: 'SIGTERM' });
    await waitFor('the grandchild to be killed', () => !alive(escaped));
  });

  it('a descendant that cleared its environment cannot hold the exit forever', async () => {
    // No mark to find it by, and it keeps stdout open: the pipes are let go after a grace period.
    let out = '';
    const child = owned('env -i setsid sleep 30 & echo "$!"; sleep 0.2', (c) => (out += c.toString()));
    const t0 = Date.now();
    const exit = await child.exited;
    const took = Date.now() - t0;
    const pid = Number(out.trim());
    strays.push(pid);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(took).toBeLessThan(4500);
    expect(alive(pid)).toBe(true);
    expect(markedProcesses(child.mark)).toEqual([]);
  });
});

describe('markedProcesses and killMarked', () => {
  it('find exactly the processes with the mark, and nothing for another mark', async () => {
    const child = owned('sleep 30 & sleep 30 & wait');
    // Three, and both sleeps past their exec: a process in the middle of one has no environ to
    // read for an instant (seen once on a loaded CI: the sweep then found two of the three).
    const command = (pid: number) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    };
    const found = await waitFor('three processes', () => {
      const pids = markedProcesses(child.mark);
      return pids.length === 3 && pids.filter((pid) => command(pid) === 'sleep').length === 2 && pids;
    });
    expect(found).toContain(child.pid);
    expect(markedProcesses('0000000000000000')).toEqual([]);
    // A mark that is a prefix of the real one matches nothing.
    expect(markedProcesses(child.mark.slice(0, 8))).toEqual([]);
    expect(killMarked(child.mark)).toBe(3);
    expect((await child.exited).signal).toBe('SIGKILL');
    await waitFor('none left', () => markedProcesses(child.mark).length === 0);
    expect(killMarked(child.mark)).toBe(0);
  });

  it('find a process whose environment is larger than one read, its mark past the first 64 KiB', async () => {
    // Two variables of 100 KB before the mark (one may be at most 128 KiB on Linux).
    const big = { A_BIG: 'a'.repeat(100_000), B_BIG: 'b'.repeat(100_000) };
    const child = spawnOwned('sh', ['-c', 'sleep 30'], { cwd: '/', env: { ...big, ...ENV } });
    started.push(child);
    const environ = await waitFor('its environment', () => {
      try {
        return fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8');
      } catch {
        return false;
      }
    });
    expect(environ.indexOf(MARK_VAR)).toBeGreaterThan(64 * 1024);
    await waitFor('it, by its mark', () => markedProcesses(child.mark).includes(child.pid!));
    await child.stop(1000);
  });
});

describe('processStartTime', () => {
  it('is a number of clock ticks, stable for one process', async () => {
    const child = owned('sleep 30');
    const first = processStartTime(child.pid!);
    expect(first).toMatch(/^\d+$/);
    await sleep(50);
    expect(processStartTime(child.pid!)).toBe(first);
    expect(Number(first)).toBeGreaterThanOrEqual(Number(processStartTime(process.pid)));
    await child.stop(1000);
  });

  it('differs between two processes started apart', async () => {
    const a = owned('sleep 30');
    // Ticks are 10 ms on Linux: start the second one clearly later.
    await sleep(100);
    const b = owned('sleep 30');
    const [ta, tb] = [processStartTime(a.pid!), processStartTime(b.pid!)];
    expect(ta).not.toBeNull();
    expect(tb).not.toBeNull();
    expect(ta).not.toBe(tb);
    expect(Number(tb)).toBeGreaterThan(Number(ta));
    await Promise.all([a.stop(1000), b.stop(1000)]);
  });

  it('reads past a command name with spaces and parentheses', async () => {
    const dir = tempDir('agentbox-proc-');
    const odd = path.join(dir, 'a) (b c');
    fs.symlinkSync(fs.realpathSync('/bin/sleep'), odd);
    const before = Number(processStartTime(process.pid));
    const child = spawn(odd, ['30'], { stdio: 'ignore' });
    const pid = child.pid!;
    try {
      expect(fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()).toBe('a) (b c');
      const start = processStartTime(pid);
      expect(start).toMatch(/^\d+$/);
      expect(Number(start)).toBeGreaterThanOrEqual(before);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('is null for a process that is gone', async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    const pid = child.pid!;
    await once(child, 'exit');
    expect(processStartTime(pid)).toBeNull();
  });
});
