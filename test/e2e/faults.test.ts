import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINALIZE_PARTS } from '../../src/run/end/finalize.js';
import { bash, type RequestView, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import type { Row } from '../helpers/fault-table.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { sleep, waitFor } from '../helpers/pty.js';
import { makeReadOnly } from '../helpers/read-only.js';

/**
 * Fault tests: agentbox and claude are killed at random points of scripted runs, many runs go at
 * once, the ledger's disk fills up or turns read-only — and every time the run ends in a known
 * state, every ledger file still parses, and nothing is lost. A summary table is printed at the end.
 * AGENTBOX_FAULT_TRIES (default 8) and AGENTBOX_FAULT_SEED (default: time) reproduce a sequence.
 * NOTE: 8 landed kills per scenario keep `npm test` within its time on a 2-core machine (50 took
 * ~9 of its 21 minutes; 12 took 57 s of its 13.8 once the groups' load tests came, issue 31); the
 * depth is `npm run soak` (500 per scenario, docs/fault-tests.md).
 */
const TRIES = Number(process.env.AGENTBOX_FAULT_TRIES ?? 8);
const SEED = Number(process.env.AGENTBOX_FAULT_SEED ?? Date.now() % 1_000_000_007);
const CONCURRENCY = 3;
const MAX_REDRAWS = 6;
const TASK = 'FAULT-TASK';

/** mulberry32: a small seeded generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rows: Row[] = [];

/**
 * Runs `work` on every item, `limit` at a time. A failure stops new items but lets the ones under
 * way finish, so that no run of a failed scenario is still going when the next scenario starts.
 */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const failures: unknown[] = [];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined && failures.length === 0; item = queue.shift()) {
        try {
          await work(item);
        } catch (error) {
          failures.push(error);
        }
      }
    }),
  );
  if (failures.length > 0) throw failures[0];
}

describe(`fault tests (seed ${SEED}, ${TRIES} tries each)`, () => {
  let p: Project;
  const rand = random(SEED);
  beforeAll(async () => {
    p = await project();
    const worker = (r: RequestView) => r.allText.includes(TASK);
    p.server.setRules([
      { when: { lastUserText: 'Continue the task where you left off' }, reply: text('RESUMED-OK') },
      { when: { lastUserText: 'cut off by a crash' }, reply: text('REPLAYED-OK') },
      { when: { turn: 0, predicate: worker }, reply: bash('echo a >> log.txt') },
      {
        when: { turn: 1, predicate: worker },
        reply: (r) => bash(r.allText.includes('FAULT-SLOW') ? 'sleep 3' : 'sleep 0.3'),
      },
      { when: { turn: 2, predicate: worker }, reply: bash('echo b >> log.txt') },
      { when: { turn: 3, predicate: worker }, reply: text('all done') },
    ]);
  });
  afterAll(async () => {
    printTable();
  });

  /** `agentbox fix <task>` in the background. */
  const start = (task: string, env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', task], {
      cwd: p.repo.dir,
      env: { ...p.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { pid: child.pid!, exited, output: () => output };
  };
  const runOf = (task: string) =>
    p.runs().find((name) => {
      try {
        return p.state(name).summary?.task === task;
      } catch {
        return false;
      }
    });
  const talking = (task: string) =>
    waitFor(
      () => p.server.requests.some((r) => r.view.allText.includes(task)),
      `the first request of ${task}`,
    );

  /** What must exist and parse for a run in its final state; returns what is missing. */
  function lostArtifacts(name: string): string[] {
    const lost: string[] = [];
    const dir = p.runDir(name);
    let state: Record<string, any> | undefined;
    try {
      state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
    } catch {
      lost.push(`${name}: state.json`);
    }
    if (!fs.existsSync(path.join(dir, 'meta.yaml'))) lost.push(`${name}: meta.yaml`);
    for (const file of ['events.jsonl', 'raw/stream.jsonl']) {
      const full = path.join(dir, file);
      if (!fs.existsSync(full)) continue;
      for (const line of fs.readFileSync(full, 'utf8').split('\n').filter(Boolean)) {
        try {
          JSON.parse(line);
        } catch {
          lost.push(`${name}: a cut line in ${file}`);
          break;
        }
      }
    }
    if (state && state.status !== 'ACTIVE' && !fs.existsSync(path.join(dir, 'report.md')))
      lost.push(`${name}: report.md`);
    if (state?.status === 'REVIEW' && !fs.existsSync(path.join(dir, 'changes.patch')))
      lost.push(`${name}: changes.patch`);
    return lost;
  }

  function indexWhole(): string[] {
    return fs
      .readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        try {
          JSON.parse(line);
          return [];
        } catch {
          return [`INDEX.jsonl: a cut line: ${line.slice(0, 60)}`];
        }
      });
  }

  /** Resumes a run that crashed; returns how it went on (same session, or replayed). */
  async function resumeCrashed(name: string, sessionBefore: string | null): Promise<string> {
    const result = await p.agentbox(['resume', name]);
    const after = p.state(name);
    if (result.code !== 0 || !['REVIEW', 'DONE'].includes(after.status)) {
      throw new Error(
        `resume of ${name} ended ${after.status} (${result.code}):\n${result.stdout}\n${result.stderr}`,
      );
    }
    if (result.stdout.includes('cannot be resumed as it is')) return 'replayed (nothing to resume)';
    expect(after.session_id).toBe(sessionBefore);
    return 'resumed, same session';
  }

  /**
   * Where a run was when it was killed, from the last line of its stream log: the model's answer
   * awaited, a tool running, or claude's final result already out.
   */
  function phaseOf(name: string): string {
    let lines: string[];
    try {
      lines = fs
        .readFileSync(path.join(p.runDir(name), 'raw/stream.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean);
    } catch {
      return 'starting';
    }
    let last: any;
    try {
      last = JSON.parse(lines.at(-1) ?? 'null');
    } catch {
      return 'a line half read';
    }
    if (!last || last.type === 'system') return 'waiting for the model';
    if (last.type === 'result') return 'after the result';
    if (last.type === 'user') return 'waiting for the model';
    if (last.type === 'assistant')
      return last.message?.content?.some((b: any) => b.type === 'tool_use')
        ? 'tool running'
        : 'model answering';
    return String(last.type);
  }

  /** Whether claude's final `result` line is in the run's stream log (its keys come in any order). */
  const hasResultLine = (name: string) =>
    fs
      .readFileSync(path.join(p.runDir(name), 'raw/stream.jsonl'), 'utf8')
      .split('\n')
      .some((line) => {
        try {
          return JSON.parse(line).type === 'result';
        } catch {
          return false;
        }
      });

  /**
   * One try: a run killed at a random point. 'late' when the kill cannot land (the run or the
   * victim had ended), or landed after the run's final result was recorded (which the test proves);
   * such a try is redrawn. A killed run that claims success without that proof fails the test.
   */
  async function tryKill(
    victim: 'claude' | 'agentbox',
    point: { turn: number; delay: number },
    label: string,
    row: Row,
  ): Promise<'landed' | 'late'> {
    const task = `${TASK} kill ${victim} ${label}`;
    const run = start(task);
    // NOTE: a fix run reaches its first turn in seconds on an idle machine, but beside a second
    // whole suite on a slow one it took over 30 s (issue 36): the wait is long, and says where the run was.
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === point.turn && r.view.allText.includes(task)),
      `turn ${point.turn} of ${task}`,
      {
        timeoutMs: 120_000,
        context: () => {
          const name = runOf(task);
          return `run ${name ?? '(not created)'}: ${name ? JSON.stringify(p.state(name).status) : ''}\n${run.output()}`;
        },
      },
    );
    await sleep(point.delay);
    const name = runOf(task)!;
    const before = p.state(name);
    const phase = phaseOf(name);
    let killedAt: number | null = null;
    // Both checked at the moment of the kill: the run is ACTIVE and the victim alive (kill(2)
    // succeeding on it). A victim that is gone cannot be killed, and the try is redrawn.
    if (before.status === 'ACTIVE') {
      try {
        process.kill(victim === 'claude' ? before.claude_pid : run.pid, 'SIGKILL');
        killedAt = Date.now();
      } catch {
        // Already ended.
      }
    }
    await run.exited;
    // The next agentbox command's watchdog finds a dead supervisor.
    if (victim === 'agentbox') await p.agentbox(['status']);
    const state = p.state(name);
    if (['REVIEW', 'DONE'].includes(state.status)) {
      row.lost.push(...lostArtifacts(name));
      if (killedAt === null) return 'late';
      // A killed run may claim success only when its final result was recorded before the kill:
      // agentbox's own end state (a SIGKILLed agentbox writes nothing after), or claude's result
      // line (a SIGKILLed claude prints nothing after). NOTE: kill(2) succeeds on a process that
      // has exited but was not reaped yet (a zombie): such a kill landed after the end.
      if (victim === 'agentbox') {
        expect(Date.parse(state.ended_at), `${name} ended after agentbox was killed`).toBeLessThanOrEqual(
          killedAt,
        );
      } else {
        const tail = () =>
          fs
            .readFileSync(path.join(p.runDir(name), 'raw/stream.jsonl'), 'utf8')
            .trim()
            .split('\n')
            .slice(-3)
            .map((l) => l.slice(0, 300))
            .join('\n');
        expect(
          hasResultLine(name),
          `${name} is ${state.status} though claude (pid ${before.claude_pid}) was killed before its result, at ${phase}; state: ${JSON.stringify(state)}; stream tail:\n${tail()}\nevents: ${JSON.stringify(p.events(name).slice(-6))}`,
        ).toBe(true);
      }
      return 'late';
    }
    expect(killedAt, `${name} is ${state.status} but was not killed`).not.toBeNull();
    expect(state.status).toBe('CRASHED');
    row.points[`turn ${point.turn}, ${phase}`] = (row.points[`turn ${point.turn}, ${phase}`] ?? 0) + 1;
    // Crashed is a final state too: its files are whole and its report says what happened.
    row.lost.push(...lostArtifacts(name));
    const how = await resumeCrashed(name, before.session_id);
    row.outcomes[how] = (row.outcomes[how] ?? 0) + 1;
    row.lost.push(...lostArtifacts(name));
    return 'landed';
  }

  const killScenario = (victim: 'claude' | 'agentbox') => async () => {
    const row: Row = {
      scenario: `kill -9 of ${victim} at a random point`,
      tries: 0,
      redrawn: 0,
      points: {},
      outcomes: {},
      lost: [],
    };
    rows.push(row);
    // A random point of the scripted run: during one of its first three turns (the model's answer,
    // then the tool it asked for), some milliseconds after that turn's request reached the model.
    const draw = () => ({ turn: Math.floor(rand() * 3), delay: Math.floor(rand() * 500) });
    const points = Array.from({ length: TRIES }, draw);
    await pool(
      points.map((point, i) => ({ point, i })),
      CONCURRENCY,
      async ({ point, i }) => {
        for (let attempt = 0; ; attempt++) {
          if (attempt === MAX_REDRAWS) throw new Error(`try #${i}: no kill landed in ${MAX_REDRAWS} draws`);
          // A redraw comes earlier in the run: a late kill is one past the run's end.
          const at =
            attempt === 0 ? point : { turn: Math.floor(rand() * 2), delay: Math.floor(rand() * 300) };
          if ((await tryKill(victim, at, `#${i}.${attempt}`, row)) === 'landed') break;
          row.redrawn++;
        }
        row.tries++;
      },
    );
    row.lost.push(...indexWhole());
    await expectNoProcessesLeft(p.tag, 10_000);
    expect(row.tries).toBe(TRIES);
    expect(row.lost).toEqual([]);
  };

  it.each(FINALIZE_PARTS)(
    'kill -9 of agentbox right after finalisation part "%s": nothing lost, the run ends whole',
    async (part) => {
      const row: Row = {
        scenario: `kill -9 of agentbox after finalising: ${part}`,
        tries: 1,
        redrawn: 0,
        points: {},
        outcomes: {},
        lost: [],
      };
      rows.push(row);
      const task = `${TASK} finalize ${part}`;
      const run = start(task, { AGENTBOX_TEST_PAUSE: `finalize:${part}` });
      const name = await waitFor(() => runOf(task), `the run of ${task}`);
      const marker = path.join(p.runDir(name), `paused-${part}`);
      await waitFor(() => fs.existsSync(marker), `agentbox to pause after ${part}`, { timeoutMs: 60_000 });
      expect(p.state(name).status).toBe(part === 'state' ? 'REVIEW' : 'ACTIVE');
      process.kill(run.pid, 'SIGKILL');
      await run.exited;
      fs.rmSync(marker);
      await p.agentbox(['status']);
      const state = p.state(name);
      row.lost.push(...lostArtifacts(name));
      if (part === 'state') {
        // Everything was recorded before the kill: the run stands as it ended.
        expect(state.status).toBe('REVIEW');
        row.outcomes['REVIEW, as recorded'] = 1;
      } else {
        expect(state.status).toBe('CRASHED');
        // What was written before the kill is there, whole.
        expect(p.read(name, 'changes.patch')).toMatch(/\+a\n\+b\n/);
        if (part === 'report') expect(p.read(name, 'report.md')).toContain('- status: **REVIEW**');
        const how = await resumeCrashed(name, state.session_id);
        row.outcomes[`CRASHED, then ${how}`] = 1;
        expect(p.read(name, 'changes.patch')).toMatch(/\+a\n\+b\n/);
        expect(p.read(name, 'report.md')).toContain('- status: **REVIEW**');
      }
      row.lost.push(...lostArtifacts(name), ...indexWhole());
      await expectNoProcessesLeft(p.tag, 10_000);
      expect(row.lost).toEqual([]);
    },
    120_000,
  );

  it(
    'kill -9 of claude at random points: every run ends CRASHED or finished, and resume continues it',
    killScenario('claude'),
    Math.max(900_000, TRIES * 8_000),
  );

  it(
    'kill -9 of agentbox (the supervisor) at random points: the watchdog marks it CRASHED, resume continues it',
    killScenario('agentbox'),
    Math.max(900_000, TRIES * 8_000),
  );

  it('20 runs in parallel on one repository: all finish, nothing collides', async () => {
    const row: Row = {
      scenario: '20 fix runs in parallel',
      tries: 20,
      redrawn: 0,
      points: {},
      outcomes: {},
      lost: [],
    };
    rows.push(row);
    const tasks = Array.from({ length: 20 }, (_, i) => `${TASK} parallel #${i}`);
    const runs = tasks.map((task) => start(task));
    const codes = await Promise.all(runs.map((r) => r.exited));
    const names = tasks.map((task) => runOf(task)!);
    for (const [i, name] of names.entries()) {
      const state = p.state(name);
      row.outcomes[state.status] = (row.outcomes[state.status] ?? 0) + 1;
      expect(codes[i], runs[i]!.output()).toBe(0);
      expect(state.status).toBe('REVIEW');
      expect(p.read(name, 'changes.patch')).toMatch(/\+a\n\+b\n/);
      row.lost.push(...lostArtifacts(name));
    }
    expect(new Set(names).size).toBe(20);
    expect(new Set(names.map((n) => p.state(n).worktree_path)).size).toBe(20);
    expect(new Set(names.map((n) => p.state(n).session_id)).size).toBe(20);
    row.lost.push(...indexWhole());
    await expectNoProcessesLeft(p.tag, 10_000);
    expect(row.lost).toEqual([]);
  }, 600_000);

  // NOTE: making a device node needs root (CI and the development machine run the suite as root).
  it.skipIf(process.getuid?.() !== 0)(
    'the disk fills up during a run: a clear error, claude ended, the state intact',
    async () => {
      const row: Row = {
        scenario: 'disk full during a run',
        tries: 1,
        redrawn: 0,
        points: {},
        outcomes: {},
        lost: [],
      };
      rows.push(row);
      const task = `${TASK} FAULT-SLOW disk full`;
      const run = start(task);
      await talking(task);
      const name = runOf(task)!;
      const claude = p.state(name).claude_pid;
      // Every write to the stream log now fails with ENOSPC, as on a full disk: the file replaced by
      // a device node like /dev/full (not a link to it: agentbox never appends through a link).
      // Made beside it, then renamed over it: the run appends meanwhile, and a remove then mknod
      // lost that race once (the run had made the file again: "File exists").
      const stream = path.join(p.runDir(name), 'raw/stream.jsonl');
      const full = `${stream}.full`;
      execFileSync('mknod', [full, 'c', '1', '7']);
      fs.renameSync(full, stream);
      const code = await run.exited;
      fs.rmSync(stream);
      const state = p.state(name);
      row.outcomes[`${state.status} (${state.failure?.kind})`] = 1;
      expect(code).toBe(1);
      expect(state).toMatchObject({ status: 'CRASHED', failure: { kind: 'io_error' } });
      expect(state.failure.message).toBe(
        `cannot write .agents/runs/${name}/raw/stream.jsonl (ENOSPC); the run was stopped`,
      );
      expect(run.output()).toContain('cannot write');
      expect(() => process.kill(claude, 0)).toThrow();
      row.lost.push(...lostArtifacts(name), ...indexWhole());
      await expectNoProcessesLeft(p.tag, 10_000);
      expect(row.lost).toEqual([]);
    },
    120_000,
  );

  it('the run folder turns read-only during a run: a clear error, claude ended, the state intact', async () => {
    const row: Row = {
      scenario: 'read-only ledger during a run',
      tries: 1,
      redrawn: 0,
      points: {},
      outcomes: {},
      lost: [],
    };
    rows.push(row);
    const task = `${TASK} FAULT-SLOW read-only`;
    const run = start(task);
    await talking(task);
    const name = runOf(task)!;
    const claude = p.state(name).claude_pid;
    const stateBefore = p.read(name, 'state.json');
    const undo = makeReadOnly(p.runDir(name));
    let code: number | null;
    try {
      code = await run.exited;
      // Nothing could be written, so nothing was half-written.
      expect(p.read(name, 'state.json')).toBe(stateBefore);
    } finally {
      undo();
    }
    expect(code).toBe(1);
    expect(run.output()).toContain(`run ${name} ended but could not be recorded`);
    expect(run.output()).toContain('make .agents writable again');
    expect(() => process.kill(claude, 0)).toThrow();
    // Writable again: the watchdog records what happened.
    const status = await p.agentbox(['status']);
    expect(status.stderr).toContain(`run ${name} is CRASHED: the supervisor`);
    row.outcomes[`${p.state(name).status}, then ${await resumeCrashed(name, p.state(name).session_id)}`] = 1;
    row.lost.push(...lostArtifacts(name), ...indexWhole());
    await expectNoProcessesLeft(p.tag, 10_000);
    expect(row.lost).toEqual([]);
  }, 120_000);
});

function printTable(): void {
  const tally = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
  const header = ['scenario', 'tries', 'redrawn', 'kill points (turn, phase)', 'outcomes', 'lost artifacts'];
  const body = rows.map((r) => [
    r.scenario,
    String(r.tries),
    String(r.redrawn),
    tally(r.points) || '-',
    tally(r.outcomes),
    String(r.lost.length),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const table = [
    `fault tests, seed ${SEED} (AGENTBOX_FAULT_SEED=${SEED} AGENTBOX_FAULT_TRIES=${TRIES} to replay)`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...body.map(line),
    ...rows.flatMap((r) => r.lost.map((l) => `  lost: ${l}`)),
  ].join('\n');
  console.log(table);
  if (process.env.AGENTBOX_FAULT_REPORT) {
    fs.writeFileSync(
      process.env.AGENTBOX_FAULT_REPORT,
      `${JSON.stringify({ seed: SEED, tries: TRIES, rows }, null, 2)}\n`,
    );
  }
}
