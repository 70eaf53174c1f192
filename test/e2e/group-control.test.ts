import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, hang, type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';
import { GROUP_FILES, readGroupFiles } from '../helpers/group.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * A group (issue 31) under control, on the real Claude Code with its sandbox and a scripted model
 * whose attempts differ: a kill -9 of the group's one process mid-group is marked by the watchdog
 * and taken up whole by `agentbox recover` (crashed attempts go on, the one never started starts,
 * in one process); `watch <group>` replays every attempt with its prefix; `resume` takes up one
 * attempt or the whole group after a stop.
 */
const attempt = (k: number, n: number) => (r: RequestView) => r.allText.includes(`attempt ${k} of ${n} `);

/** Each attempt makes one call, then its next model request hangs: its session has a conversation. */
function oneCallThenHang(task: string, n: number): Rule[] {
  return Array.from({ length: n }, (_, i): Rule[] => [
    { when: { anyText: task, turn: 0, predicate: attempt(i + 1, n) }, reply: bash(`echo attempt ${i + 1}`) },
    { when: { anyText: task, predicate: attempt(i + 1, n) }, reply: hang() },
  ]).flat();
}

/**
 * Each attempt sets x (42 passes runs.verify, 2 fails it) once in its conversation, whenever that
 * started, then answers (`violate`: without the contract's section).
 */
function finish(task: string, plays: readonly ('pass' | 'fail' | 'violate')[]): Rule[] {
  const n = plays.length;
  const edited = (r: RequestView) => JSON.stringify(r.body.messages).includes('"name":"Edit"');
  return plays.flatMap((play, i): Rule[] => {
    const k = i + 1;
    const value = play === 'fail' ? 2 : 42;
    return [
      {
        when: { anyText: task, predicate: (r) => attempt(k, n)(r) && !edited(r) },
        reply: (r) =>
          tool('Edit', {
            file_path: path.join(r.workingDirectory!, 'src/app.ts'),
            old_string: 'export const x = 1;',
            new_string: `export const x = ${value};`,
          }),
      },
      {
        when: { anyText: task, predicate: attempt(k, n) },
        reply: text(play === 'violate' ? 'I set x.' : `## Summary\nSet x to ${value} (attempt ${k}).`),
      },
    ];
  });
}

describe('group control: watchdog, recover, watch, resume', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: GROUP_FILES });
  });
  afterAll(async () => p?.cleanup());

  const group = (name: string) => readGroupFiles(p.repo.dir, name);
  const runsOf = (name: string): (string | null)[] => group(name).state.members.map((m: any) => m.run);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Waits until attempts `ks` (of `n`) hang after their first call. */
  const running = async (name: string, ks: number[], n: number) => {
    const hung = (k: number) => p.server.requests.some((r) => r.view.turn === 1 && attempt(k, n)(r.view));
    for (let i = 0; i < 600; i++) {
      const runs = runsOf(name);
      if (ks.every((k) => runs[k - 1] && hung(k))) return runs;
      await sleep(200);
    }
    throw new Error(`attempts ${ks} did not start: ${JSON.stringify(group(name).state)}`);
  };
  const detach = async (task: string, n: number, parallel: number) => {
    const started = await p.agentbox([
      'fix',
      task,
      '--attempts',
      String(n),
      '--max-parallel',
      String(parallel),
      '--detach',
      '--json',
    ]);
    expect(started.code, started.stderr).toBe(0);
    return JSON.parse(started.stdout).group as string;
  };
  /** The run folders of a group's attempts (each attempt started once: one folder each). */
  const foldersOf = (id: string) =>
    fs
      .readdirSync(path.join(p.repo.dir, '.agents/runs'))
      .filter((r) => p.state(r)?.summary?.group?.id === id);

  it('kill -9 mid-group: the watchdog marks it, recover takes the group up whole, watch replays it', async () => {
    const task = 'TASK-CTL-CRASH set x';
    p.server.setRules(oneCallThenHang(task, 3));
    const name = await detach(task, 3, 2);
    const id = group(name).meta.group_id;
    // A live watch, from before the attempts start until the group's process is gone.
    const live = p.agentbox(['watch', id]);
    const [one, two] = await running(name, [1, 2], 3);
    const pid = group(name).state.pid as number;
    expect(p.state(one!).pid).toBe(pid);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}`); i++) await sleep(100);
    expect(runsOf(name)[2]).toBeNull();
    const followed = await live;
    expect(followed.code).toBe(1);
    for (const k of [1, 2])
      expect(followed.stdout).toMatch(new RegExp(`^\\[${k}\\] .*Bash echo attempt ${k}`, 'm'));
    expect(followed.stdout).toContain(`group ${name}: its agentbox process is gone`);

    // The watchdog of any command: both attempts CRASHED, the group no longer ACTIVE.
    const status = await p.agentbox(['status']);
    expect(status.stderr).toContain(`agentbox: watchdog: group ${name} is CRASHED`);
    expect(p.state(one!).status).toBe('CRASHED');
    expect(p.state(two!).status).toBe('CRASHED');
    expect(group(name).state).toMatchObject({ status: 'ENDED', crashed: { detail: expect.any(String) } });
    const rows = JSON.parse((await p.agentbox(['status', '--json'])).stdout).runs;
    expect(rows.find((r: { name: string }) => r.name === name)).toMatchObject({
      kind: 'group',
      status: 'CRASHED',
    });

    // Attempt 3 as a start that failed leaves it (src/group/run.ts launch: no run, why): status,
    // show and recover say so, and recover starts it again (issue 36: never an attempt without a run
    // and without a word).
    const file = path.join(group(name).dir, 'state.json');
    const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    raw.members[2].error = 'could not create the worktree: ENOSPC';
    fs.writeFileSync(file, JSON.stringify(raw));
    const listed = JSON.parse((await p.agentbox(['status', '--json'])).stdout).runs;
    expect(listed.find((r: { name: string }) => r.name === name).attempts[2]).toMatchObject({
      run: null,
      error: 'could not create the worktree: ENOSPC',
    });
    expect((await p.agentbox(['status'])).stdout).toContain('1 could not start');
    expect((await p.agentbox(['show', id])).stdout).toContain(
      'attempt 3 could not start: could not create the worktree: ENOSPC',
    );

    // recover: the two go on, the third starts, in one process; each reaches its end.
    p.server.setRules(finish(task, ['pass', 'fail', 'violate']));
    const dry = await p.agentbox(['recover', '--dry-run']);
    expect(dry.stdout).toContain(`group ${name}: take up`);
    expect(dry.stdout).toMatch(
      /attempt 3: start — it could not start \(could not create the worktree: ENOSPC\): it starts again/,
    );
    const recovered = await p.agentbox(['recover'], { timeoutMs: 300_000 });
    expect(recovered.code, recovered.stderr + recovered.stdout).toBe(0);
    expect(recovered.stdout).toMatch(/attempt 1\/3 resumed/);
    expect(recovered.stdout).toMatch(/attempt 3\/3 started/);
    const runs = runsOf(name) as string[];
    expect(runs.slice(0, 2)).toEqual([one, two]);
    expect(runs[2]).toBeTruthy();
    expect(foldersOf(id).sort()).toEqual([...runs].sort());
    const states = runs.map((r) => p.state(r));
    expect(states.map((s) => s.status)).toEqual(['REVIEW', 'ABORTED', 'ABORTED']);
    expect(new Set(states.map((s) => s.pid)).size).toBe(1);
    const { state } = group(name);
    expect(state.status).toBe('ENDED');
    expect(state.crashed ?? null).toBeNull();
    expect(state.members[2].error).toBeUndefined();
    const again = await p.agentbox(['recover']);
    expect(again.stdout).not.toContain('take up');
    await expectNoProcessesLeft(p.tag);

    // watch <group>: a replay of every attempt, each line after its attempt, then the group's end.
    const watched = await p.agentbox(['watch', id]);
    expect(watched.code, watched.stderr).toBe(0);
    for (const k of [1, 2, 3])
      expect(watched.stdout).toMatch(new RegExp(`^\\[${k}\\] .*Edit .*app\\.ts`, 'm'));
    expect(watched.stdout).toMatch(/^\[1\] ✓ .* — REVIEW/m);
    expect(watched.stdout).toMatch(/^\[2\] ✗ .* — ABORTED/m);
    expect(watched.stdout).toContain(`group ${name} — REVIEW · exit 0`);
    const transcript = await p.agentbox(['watch', id, '--transcript']);
    expect(transcript.code).not.toBe(0);
    expect(transcript.stderr).toContain('pick an attempt');
    // watch <attempt> is a run's watch.
    const one1 = await p.agentbox(['watch', one!.slice(-6)]);
    expect(one1.stdout).toContain(`${one} — REVIEW`);
  }, 420_000);

  it('resume <attempt> takes up that one only; resume <group> the rest; done or merged groups are refused', async () => {
    const task = 'TASK-CTL-RESUME set x';
    p.server.setRules(oneCallThenHang(task, 2));
    const name = await detach(task, 2, 1);
    const id = group(name).meta.group_id;
    const [one] = await running(name, [1], 2);
    // While the group's process runs it, neither the group nor an attempt is taken up by another.
    for (const ref of [id, one!.slice(-6)]) {
      const busy = await p.agentbox(['resume', ref]);
      expect(busy.code).not.toBe(0);
      expect(busy.stderr).toContain(`group ${name} is still running`);
    }
    const stopped = await p.agentbox(['stop', id]);
    expect(stopped.code, stopped.stderr + stopped.stdout).toBe(0);
    expect(p.state(one!).status).toBe('ABORTED');
    expect(group(name).state).toMatchObject({ halted: { reason: 'stopped' }, members: [{}, { run: null }] });

    p.server.setRules(finish(task, ['pass', 'pass']));
    const alone = await p.agentbox(['resume', one!.slice(-6), 'MORE-FOR-ONE'], { timeoutMs: 180_000 });
    expect(alone.code, alone.stderr + alone.stdout).toBe(0);
    expect(p.server.requests.some((r) => r.view.allText.includes('MORE-FOR-ONE'))).toBe(true);
    expect(p.state(one!).status).toBe('REVIEW');
    expect(runsOf(name)[1]).toBeNull();
    expect(group(name).state.halted).toMatchObject({ reason: 'stopped' });

    const whole = await p.agentbox(['resume', id], { timeoutMs: 180_000 });
    expect(whole.code, whole.stderr + whole.stdout).toBe(0);
    expect(whole.stdout).toMatch(/attempt 1 \(.{6}\): leave — it ended REVIEW/);
    const two = runsOf(name)[1]!;
    expect(p.state(two).status).toBe('REVIEW');
    expect(group(name).state).toMatchObject({ status: 'ENDED', halted: null });
    expect(foldersOf(id)).toHaveLength(2);

    const nothing = await p.agentbox(['resume', id]);
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toContain(`nothing to resume in group ${name}`);
    const file = path.join(group(name).dir, 'state.json');
    fs.writeFileSync(file, JSON.stringify({ ...group(name).state, status: 'MERGED' }));
    const merged = await p.agentbox(['resume', id]);
    expect(merged.code).not.toBe(0);
    expect(merged.stderr).toContain(`group ${name} is MERGED`);
    await expectNoProcessesLeft(p.tag);
  }, 420_000);
});
