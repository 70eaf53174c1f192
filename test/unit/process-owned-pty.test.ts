import fs from 'node:fs';
import path from 'node:path';
import type { IPty } from '@lydell/node-pty';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadPty, type SpawnPty } from '../../src/claude/pty.js';
import { endReason, type OwnedPty, type PtySpawner, spawnOwnedPty } from '../../src/process/owned-pty.js';
import { killMarked, markedProcesses } from '../../src/process/reap.js';
import { tempDir } from '../helpers/git-repo.js';

// Real processes behind a real pty: `sh -c` scripts stand in for claude and its tools.
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm' };
let nodePty: SpawnPty;
const dir = tempDir('agentbox-owned-pty-');
const started: OwnedPty[] = [];
/** What each spawned pty's subscriptions were: how many were made, and how many disposed. */
const subscriptions = { made: 0, disposed: 0 };

beforeAll(async () => {
  nodePty = await loadPty();
});

/** node-pty's own spawn, with its subscriptions counted (the pty and its process are real). */
const spawn: PtySpawner = (bin, args, o) => {
  const pty = nodePty(bin, args, { name: 'xterm', ...o });
  const counted = <T>(event: IPty['onData'] | IPty['onExit']) =>
    ((listener: (e: T) => void) => {
      subscriptions.made++;
      const d = (event as (l: (e: T) => void) => { dispose(): void })(listener);
      return {
        dispose: () => {
          subscriptions.disposed++;
          d.dispose();
        },
      };
    }) as never;
  const wrapped = { onData: counted(pty.onData), onExit: counted(pty.onExit) };
  return new Proxy(pty, {
    get(target, prop) {
      if (prop === 'onData' || prop === 'onExit') return wrapped[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
};

function owned(script: string, onData: (d: string) => void = () => {}): OwnedPty {
  const child = spawnOwnedPty(spawn, 'sh', ['-c', script], {
    cwd: '/',
    env: ENV,
    cols: 80,
    rows: 24,
    onData,
  });
  started.push(child);
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, probe: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

function alive(pid: number): boolean {
  try {
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
    await child.stop(0);
    await waitFor('the marked processes to end', () => markedProcesses(child.mark).length === 0, 3000).catch(
      () => leftovers.push(...markedProcesses(child.mark)),
    );
    killMarked(child.mark);
  }
  expect(leftovers).toEqual([]);
});

describe('spawnOwnedPty', () => {
  it('a child that ends by itself: its output, its code, why "exit", and its subscriptions disposed', async () => {
    const before = { ...subscriptions };
    let screen = '';
    const child = owned('echo hello; exit 3', (d) => {
      screen += d;
    });
    const exit = await child.exited;
    expect(screen).toContain('hello');
    expect(exit).toMatchObject({ code: 3, signal: null, why: 'exit' });
    expect(subscriptions.made - before.made).toBe(2);
    expect(subscriptions.disposed - before.disposed).toBe(2);
  });

  it('stop(): SIGTERM to the whole process group, and why "stopped"', async () => {
    const file = path.join(dir, 'termed');
    let screen = '';
    // A job in the child's own process group (the pty made the child its leader) that says when
    // SIGTERM reaches it; the leader, on its own SIGTERM, waits for the job before it exits.
    const job = `(trap 'echo yes > ${file}; exit 0' TERM; while :; do sleep 0.05; done) &`;
    const child = owned(`trap 'wait; exit 0' TERM; ${job} echo started; wait`, (d) => {
      screen += d;
    });
    await waitFor('the job to start', () => screen.includes('started'));
    await sleep(100);
    const exit = await child.stop(3000);
    expect(exit).toMatchObject({ code: 0, signal: null, why: 'stopped' });
    expect(fs.existsSync(file)).toBe(true);
  });

  it('a child that ignores SIGTERM is killed after the grace period: why "killed"', async () => {
    let screen = '';
    const child = owned('trap "" TERM; echo ready; while :; do sleep 1; done', (d) => {
      screen += d;
    });
    await waitFor('the trap', () => screen.includes('ready'));
    const from = Date.now();
    const exit = await child.stop(400);
    expect(Date.now() - from).toBeGreaterThanOrEqual(350);
    expect(exit).toMatchObject({ code: null, signal: '9', why: 'killed' });
  });

  it('stop() is safe to call again: a shorter grace brings the SIGKILL forward, the same promise', async () => {
    let screen = '';
    const child = owned('trap "" TERM; echo ready; while :; do sleep 1; done', (d) => {
      screen += d;
    });
    await waitFor('the trap', () => screen.includes('ready'));
    const first = child.stop(60_000);
    const from = Date.now();
    const second = child.stop(0);
    expect(second).toBe(first);
    expect((await first).why).toBe('killed');
    expect(Date.now() - from).toBeLessThan(2000);
    expect(await child.stop()).toBe(await first);
  });

  it('a signal agentbox did not send: why "signal"', async () => {
    const child = owned('sleep 300');
    await sleep(100);
    process.kill(child.pid, 'SIGKILL');
    expect(await child.exited).toMatchObject({ code: null, signal: '9', why: 'signal' });
  });

  it('a descendant in a session of its own is found by its mark and killed when the child exits', async () => {
    let screen = '';
    const child = owned('setsid sleep 300 & echo "pid=$!"; sleep 0.3', (d) => {
      screen += d;
    });
    await waitFor('the descendant', () => /pid=\d+/.test(screen));
    const escaped = Number(/pid=(\d+)/.exec(screen)![1]);
    expect((await child.exited).why).toBe('exit');
    await waitFor('the descendant to be killed', () => !alive(escaped), 3000);
  });
});

describe('endReason', () => {
  it.each([
    [null, undefined, 'exit'],
    [null, 9, 'signal'],
    ['SIGTERM', undefined, 'stopped'],
    ['SIGTERM', 15, 'stopped'],
    ['SIGKILL', 9, 'killed'],
  ] as const)('sent %s, died of %s → %s', (sent, diedOf, why) => {
    expect(endReason(sent, diedOf)).toBe(why);
  });
});
