import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as runCli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import {
  activeDir,
  activeRunNames,
  heartbeat,
  type Ledger,
  readState,
  updateState,
} from '../../src/ledger/index.js';
import { onBehalfOf } from '../../src/process/owner.js';
import { isAlive, MARK_VAR, processStartTime } from '../../src/process/reap.js';
import { crashedArea, createPrivateArea, privateBase, removeCrashedArea } from '../../src/sandbox/private.js';
import { findLedgerRoot, watchdogHasWork } from '../../src/watchdog/probe.js';
import { runWatchdog } from '../../src/watchdog/watchdog.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
});

/** A real process that ran and exited: its pid is dead (and, for a while, not reused). */
async function deadPid(): Promise<{ pid: number; start: string | null }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 200)']);
  const start = processStartTime(child.pid!);
  await new Promise((resolve) => child.once('exit', resolve));
  return { pid: child.pid!, start };
}

/** A long-lived stand-in for claude: a process group leader with a marked environment. */
function fakeClaude(mark: string): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, [MARK_VAR]: mark },
  });
  children.push(child);
  return child;
}

const NEVER = () => {
  throw new Error('the stall threshold was read although no heartbeat was old');
};
const MIN = 60_000;

async function activeRun(ledger: Ledger, patch: Parameters<typeof updateState>[2]) {
  const run = await create(ledger, 'some task', new Date().toISOString());
  await updateState(ledger, run.name, patch);
  return run;
}

describe('the watchdog', () => {
  it("removes only the area the crashed run left: a resume's next one, made once the run was CRASHED, stays (its claude found no settings file)", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-watchdog-'));
    const base = privateBase({ TMPDIR: tmp }, process.getuid!());
    const name = '26-01-01_0900__task__abcdef';
    const crashed = createPrivateArea(base, name);
    crashed.writeSecret('settings.json', '{}');
    const left = crashedArea(base, name);
    expect(left.secrets).toEqual([path.basename(crashed.secretsDir)]);
    // The resume, between the watchdog's mark and its cleanup: it makes the run's next area.
    const resumed = createPrivateArea(base, name);
    const settings = resumed.writeSecret('settings.json', '{}');
    removeCrashedArea(base, name, left);
    expect(fs.existsSync(settings)).toBe(true);
    expect(fs.existsSync(resumed.sockDir)).toBe(true);
    // Taken without a resume in between, it goes whole.
    const again = crashedArea(base, name);
    removeCrashedArea(base, name, again);
    expect(fs.existsSync(resumed.secretsDir)).toBe(false);
    expect(fs.existsSync(resumed.sockDir)).toBe(false);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('marks a run whose supervisor is gone CRASHED, ends its orphaned claude, removes its commands, socket and secrets', async () => {
    const { repo, ledger } = ledgerRepo();
    const dead = await deadPid();
    const mark = 'feedface00000001';
    const claude = fakeClaude(mark);
    // Something claude started in the background, in a session of its own.
    const escaped = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, [MARK_VAR]: mark },
    });
    children.push(escaped);
    const workdir = path.join(repo.dir, 'sub');
    const run = await activeRun(ledger, {
      pid: dead.pid,
      pid_start: dead.start,
      claude_pid: claude.pid!,
      claude_pid_start: processStartTime(claude.pid!),
      process_mark: mark,
      launch_dir: workdir,
      last_heartbeat: new Date().toISOString(),
    });
    // Its socket where agentbox puts one (a socket_path elsewhere is not removed: socket-path.ts).
    const socket = path.join(run.dir, 'supervisor.sock');
    fs.writeFileSync(socket, '');
    await updateState(ledger, run.name, { socket_path: socket });
    for (const dir of [repo.dir, workdir])
      fs.mkdirSync(path.join(dir, '.claude/commands', `run_${run.id}`), { recursive: true });
    // Its private area as its agentbox left it (the model key its claude read, its sockets), and
    // another run's, which stays.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-watchdog-'));
    const base = privateBase({ TMPDIR: tmp }, process.getuid!());
    const [area, other] = [run.name, `${run.name}x`].map((name) => createPrivateArea(base, name));
    for (const a of [area!, other!]) {
      a.writeSecret('model-key', 'sk-ant-secret');
      fs.mkdirSync(path.join(a.sockDir, 'claude-0'));
    }

    const env = { ...process.env, TMPDIR: tmp };
    const findings = await onBehalfOf(process.pid, env, () => runWatchdog(ledger, { stallMs: NEVER }));

    expect(findings).toEqual([
      {
        run: run.name,
        action: 'crashed',
        detail: `the supervisor (pid ${dead.pid}) is gone; its orphaned claude (pid ${claude.pid}) was ended`,
      },
    ]);
    const state = readState(run.dir)!;
    expect(state).toMatchObject({
      status: 'CRASHED',
      failure: { kind: 'crashed', message: findings[0]!.detail },
      claude_pid: null,
      socket_path: null,
    });
    expect(state.ended_at).not.toBeNull();
    await waitUntil(() => !isAlive(claude.pid!, null) && !isAlive(escaped.pid!, null));
    expect(fs.existsSync(socket)).toBe(false);
    for (const dir of [repo.dir, workdir])
      expect(fs.existsSync(path.join(dir, '.claude/commands', `run_${run.id}`))).toBe(false);
    expect(fs.readdirSync(area!.secretsRoot)).toEqual([path.basename(other!.secretsDir)]);
    expect(fs.readdirSync(path.dirname(area!.sockDir))).toEqual([path.basename(other!.sockDir)]);
    // Its work folder (the agent's private git) is kept for its resume.
    expect(fs.existsSync(area!.workDir)).toBe(true);
    fs.rmSync(tmp, { recursive: true, force: true });
    expect(activeRunNames(ledger)).toEqual([]);
    // The run could not write its report: the watchdog leaves one saying what happened.
    const report = fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8');
    expect(report).toContain(`- status: **CRASHED** — crashed: ${findings[0]!.detail}`);
    expect(report).toContain(`agentbox resume ${run.id}`);
    const index = fs
      .readFileSync(ledger.indexJsonl, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.at(-1)).toMatchObject({ run: run.name, event: 'watchdog', status: 'CRASHED' });
  });

  it('two watchdogs racing over one crashed run: the run is marked once and keeps its crash report', async () => {
    const { ledger } = ledgerRepo();
    const dead = await deadPid();
    const run = await activeRun(ledger, {
      pid: dead.pid,
      pid_start: dead.start,
      last_heartbeat: new Date().toISOString(),
    });
    // Watchdog A writes the report, then waits in the window before its mark while watchdog B (in
    // another command) finds the report there, writes none, and marks the run CRASHED first.
    let releaseA!: () => void;
    const aWaits = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    let aInWindow!: () => void;
    const aReachedWindow = new Promise<void>((resolve) => {
      aInWindow = resolve;
    });
    const a = runWatchdog(ledger, {
      stallMs: NEVER,
      beforeMark: async () => {
        aInWindow();
        await aWaits;
      },
    });
    await aReachedWindow;
    expect(fs.existsSync(path.join(run.dir, 'report.md'))).toBe(true);
    const b = await runWatchdog(ledger, { stallMs: NEVER });
    expect(b).toMatchObject([{ run: run.name, action: 'crashed' }]);
    releaseA();
    expect(await a).toEqual([]);
    expect(readState(run.dir)!.status).toBe('CRASHED');
    expect(fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8')).toContain('**CRASHED**');
  });

  it("a run taken up by resume inside the watchdog's window is not marked, and its crash report stays", async () => {
    const { ledger } = ledgerRepo();
    const dead = await deadPid();
    const run = await activeRun(ledger, {
      pid: dead.pid,
      pid_start: dead.start,
      last_heartbeat: new Date().toISOString(),
    });
    const findings = await runWatchdog(ledger, {
      stallMs: NEVER,
      // `agentbox resume` takes the run up (this process becomes its supervisor) inside the window.
      beforeMark: async () => {
        await updateState(ledger, run.name, {
          pid: process.pid,
          pid_start: processStartTime(process.pid),
          last_heartbeat: new Date().toISOString(),
        });
      },
    });
    expect(findings).toEqual([]);
    expect(readState(run.dir)).toMatchObject({ status: 'ACTIVE', pid: process.pid });
    expect(fs.existsSync(path.join(run.dir, 'report.md'))).toBe(true);
  });

  it('trusts a pid only with its start time: a live process that reused the pid is not the supervisor', async () => {
    const { ledger } = ledgerRepo();
    const run = await activeRun(ledger, {
      pid: process.pid,
      pid_start: '1',
      last_heartbeat: new Date().toISOString(),
    });
    fs.writeFileSync(path.join(run.dir, 'report.md'), 'the real report\n');
    const [finding] = await runWatchdog(ledger, { stallMs: NEVER });
    expect(finding).toMatchObject({ run: run.name, action: 'crashed' });
    // A report the run wrote is never replaced.
    expect(fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8')).toBe('the real report\n');
  });

  it('leaves a live run with a recent heartbeat alone, without even reading the configuration', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await activeRun(ledger, {
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      last_heartbeat: new Date(Date.now() - 30_000).toISOString(),
    });
    fs.mkdirSync(path.join(repo.dir, '.claude/commands', `run_${run.id}`), { recursive: true });
    expect(await runWatchdog(ledger, { stallMs: NEVER })).toEqual([]);
    expect(readState(run.dir)!.status).toBe('ACTIVE');
    expect(fs.existsSync(path.join(repo.dir, '.claude/commands', `run_${run.id}`))).toBe(true);
  });

  it('marks a live but silent run STALLED; its next heartbeat makes it ACTIVE again', async () => {
    const { ledger } = ledgerRepo();
    const run = await activeRun(ledger, {
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      last_heartbeat: new Date(Date.now() - 7 * MIN).toISOString(),
    });
    // Silent for 7 minutes, threshold 10: nothing.
    expect(await runWatchdog(ledger, { stallMs: () => 10 * MIN })).toEqual([]);
    const [finding] = await runWatchdog(ledger, { stallMs: async () => 5 * MIN });
    expect(finding).toEqual({
      run: run.name,
      action: 'stalled',
      detail: `no heartbeat for 7m (threshold 5m); its supervisor (pid ${process.pid}) is alive but silent`,
    });
    expect(readState(run.dir)).toMatchObject({ status: 'STALLED', failure: { kind: 'stalled' } });
    // Still watched: its process may yet die (below).
    expect(activeRunNames(ledger)).toEqual([run.name]);
    expect(await runWatchdog(ledger, { stallMs: async () => 5 * MIN })).toEqual([]);

    await updateState(ledger, run.name, heartbeat(new Date()));
    expect(readState(run.dir)).toMatchObject({ status: 'ACTIVE', failure: null, ended_at: null });
    expect(activeRunNames(ledger)).toEqual([run.name]);
  });

  it('a STALLED run whose supervisor then dies is CRASHED, its orphaned claude ended (it stayed STALLED, claude on)', async () => {
    const { ledger } = ledgerRepo();
    const supervisor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      detached: true,
      stdio: 'ignore',
    });
    children.push(supervisor);
    const mark = 'feedface00000002';
    const claude = fakeClaude(mark);
    const run = await activeRun(ledger, {
      pid: supervisor.pid!,
      pid_start: processStartTime(supervisor.pid!),
      claude_pid: claude.pid!,
      claude_pid_start: processStartTime(claude.pid!),
      process_mark: mark,
      last_heartbeat: new Date(Date.now() - 7 * MIN).toISOString(),
    });
    expect((await runWatchdog(ledger, { stallMs: async () => 5 * MIN }))[0]).toMatchObject({
      action: 'stalled',
    });
    process.kill(supervisor.pid!, 'SIGKILL');
    await waitUntil(() => !isAlive(supervisor.pid!, null));
    const [finding] = await runWatchdog(ledger, { stallMs: NEVER });
    expect(finding).toMatchObject({ run: run.name, action: 'crashed' });
    expect(readState(run.dir)).toMatchObject({ status: 'CRASHED', claude_pid: null });
    await waitUntil(() => !isAlive(claude.pid!, null));
    expect(activeRunNames(ledger)).toEqual([]);
  });

  it('deletes the commands of runs that are not ACTIVE, and only those', async () => {
    const { repo, ledger } = ledgerRepo();
    const live = await activeRun(ledger, {
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      last_heartbeat: new Date().toISOString(),
    });
    const done = await activeRun(ledger, { status: 'DONE' });
    const commands = path.join(repo.dir, '.claude/commands');
    for (const name of [`run_${live.id}`, `run_${done.id}`, 'run_abcdef', 'my-own-command.md', 'run_notahex'])
      fs.mkdirSync(path.join(commands, name), { recursive: true });
    const findings = await runWatchdog(ledger, { stallMs: NEVER });
    expect(findings.map((f) => f.action)).toEqual(['commands_removed', 'commands_removed']);
    expect(fs.readdirSync(commands).sort()).toEqual(
      ['my-own-command.md', `run_${live.id}`, 'run_notahex'].sort(),
    );
  });

  it('a marker whose run is not ACTIVE is dropped only once it is old (a run being created has one first)', async () => {
    const { ledger } = ledgerRepo();
    const run = await activeRun(ledger, { status: 'DONE' });
    fs.writeFileSync(path.join(activeDir(ledger), run.name), '');
    expect(await runWatchdog(ledger, { stallMs: NEVER })).toEqual([]);
    expect(activeRunNames(ledger)).toEqual([run.name]);
    const old = new Date(Date.now() - 2 * MIN);
    fs.utimesSync(path.join(activeDir(ledger), run.name), old, old);
    expect(await runWatchdog(ledger, { stallMs: NEVER })).toEqual([
      { run: run.name, action: 'marker_dropped', detail: 'DONE' },
    ]);
    expect(activeRunNames(ledger)).toEqual([]);
  });

  it('a ledger from before the markers is scanned once and its active runs marked', async () => {
    const { ledger } = ledgerRepo();
    const a = await activeRun(ledger, { pid: process.pid, pid_start: processStartTime(process.pid) });
    await activeRun(ledger, { status: 'DONE' });
    fs.rmSync(activeDir(ledger), { recursive: true });
    expect(activeRunNames(ledger)).toEqual([a.name]);
    expect(fs.readdirSync(activeDir(ledger))).toEqual([a.name]);
  });

  it('finds the ledger from any folder inside the repository, without git', async () => {
    const { repo } = ledgerRepo();
    fs.mkdirSync(path.join(repo.dir, 'a/b'), { recursive: true });
    expect(findLedgerRoot(path.join(repo.dir, 'a/b'))).toBe(repo.dir);
    expect(findLedgerRoot(path.dirname(repo.dir))).toBeNull();
  });

  it('is not loaded when there is nothing to look at: no marker, no run commands (the probe)', async () => {
    const { repo, ledger } = ledgerRepo();
    fs.mkdirSync(activeDir(ledger), { recursive: true });
    expect(watchdogHasWork(repo.dir)).toBe(false);
    // A ledger from before the markers: the watchdog migrates it.
    fs.rmSync(activeDir(ledger), { recursive: true });
    expect(watchdogHasWork(repo.dir)).toBe(true);
    fs.mkdirSync(activeDir(ledger));
    const run = await activeRun(ledger, { status: 'DONE' });
    fs.writeFileSync(path.join(activeDir(ledger), run.name), '');
    expect(watchdogHasWork(repo.dir)).toBe(true);
    fs.rmSync(path.join(activeDir(ledger), run.name));
    fs.mkdirSync(path.join(repo.dir, '.claude', 'commands', 'mine'), { recursive: true });
    expect(watchdogHasWork(repo.dir)).toBe(false);
    // A finished run's slash commands left behind: the watchdog (run by any command) removes them.
    const left = path.join(repo.dir, '.claude', 'commands', `run_${run.name.slice(-6)}`);
    fs.mkdirSync(left);
    expect(watchdogHasWork(repo.dir)).toBe(true);
    const io = memoryIo();
    expect(await runCli(['status'], { cwd: repo.dir, env: { HOME: repo.dir }, io })).toBe(0);
    expect(fs.existsSync(left)).toBe(false);
    expect(fs.existsSync(path.join(repo.dir, '.claude', 'commands', 'mine'))).toBe(true);
  });

  it('runs before every command and tells the person what it found', async () => {
    const { repo, ledger } = ledgerRepo();
    const dead = await deadPid();
    const run = await activeRun(ledger, { pid: dead.pid, pid_start: dead.start });
    const io = memoryIo();
    const code = await runCli(['status'], { cwd: repo.dir, env: { HOME: repo.dir }, io });
    expect(code).toBe(0);
    expect(io.stderr).toBe(
      `agentbox: watchdog: run ${run.name} is CRASHED: the supervisor (pid ${dead.pid}) is gone\n`,
    );
    expect(io.stdout).toContain('CRASHED');
    // AGENTBOX_WATCHDOG=0 turns it off.
    const other = await activeRun(ledger, { pid: dead.pid, pid_start: dead.start });
    const quiet = memoryIo();
    await runCli(['status'], { cwd: repo.dir, env: { HOME: repo.dir, AGENTBOX_WATCHDOG: '0' }, io: quiet });
    expect(quiet.stderr).toBe('');
    expect(readState(other.dir)!.status).toBe('ACTIVE');
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
