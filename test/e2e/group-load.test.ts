import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { attemptRules, GROUP_FILES, groupOfTask, type Play, readGroupFiles } from '../helpers/group.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project, trustAsIs } from '../helpers/project.js';

/**
 * The load a group must carry (issue 31), on the real Claude Code with its sandbox and a scripted
 * model, on a 2-core machine: 8 attempts of one group at once, then 20 runs of every type started
 * together in one repository (a group of 3 among them, some in the foreground, some detached).
 * Each time every run reaches the end state its script leads to, and the ledger stays whole:
 * INDEX.jsonl parses, the fold cache (`status --all`), the state files (`status`) and INDEX.md
 * agree with every state.json, the pointers point at runs, no marker of .agents/active/ is left,
 * every fix run has a worktree and a branch of its own that git knows, and no process is left.
 */

const FAIL = new Set(['CRASHED', 'STALLED', 'ABORTED', 'FAILED']);
const POINTED: Record<string, (status: string) => boolean> = {
  'last-fail': (s) => FAIL.has(s),
  'last-done': (s) => s === 'DONE',
  'last-review': (s) => s === 'REVIEW',
};

/** A row of `status --json`: a run, or a group with its attempts. */
type Row =
  | { kind?: undefined; name: string; status: string }
  | {
      kind: 'group';
      name: string;
      status: string;
      attempts: { run: string | null; status: string | null }[];
    };

/** A plain fix run of `task` that passes runs.verify (x = 42) and answers in the contract's shape. */
function passingFix(task: string): Rule[] {
  return [
    {
      name: `${task} edits`,
      when: { anyText: task, turn: 0 },
      reply: (r: RequestView) =>
        tool('Edit', {
          file_path: path.join(r.workingDirectory!, 'src/app.ts'),
          old_string: 'export const x = 1;',
          new_string: 'export const x = 42;',
        }),
    },
    { name: `${task} answers`, when: { anyText: task }, reply: text('## Summary\nSet x to 42.') },
  ];
}

describe('groups under load', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: GROUP_FILES });
  });
  afterAll(async () => p?.cleanup());

  const agents = (...parts: string[]) => path.join(p.repo.dir, '.agents', ...parts);
  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

  /** Everything wrong with the ledger and the repository's worktrees, as lines (none: whole). */
  async function ledgerProblems(expected: Map<string, string>): Promise<string[]> {
    const problems: string[] = [];
    const names = fs.readdirSync(agents('runs')).sort();
    const states = new Map<string, Record<string, any>>();
    for (const name of names) {
      try {
        states.set(name, readJson(agents('runs', name, 'state.json')));
      } catch (error) {
        problems.push(`${name}: state.json does not parse: ${(error as Error).message}`);
      }
    }
    for (const [name, want] of expected) {
      const got = states.get(name)?.status;
      if (got !== want) problems.push(`${name}: ${got ?? 'no state'}, expected ${want}`);
    }
    if (names.length !== expected.size) problems.push(`${names.length} run folders, ${expected.size} runs`);
    // INDEX.jsonl: every line whole, and its last word on each run is the run's state.
    const last = new Map<string, string>();
    for (const line of fs.readFileSync(agents('INDEX.jsonl'), 'utf8').split('\n').filter(Boolean)) {
      try {
        const event = JSON.parse(line);
        last.set(event.run, event.status);
      } catch {
        problems.push(`INDEX.jsonl: a torn line: ${line.slice(0, 80)}`);
      }
    }
    for (const [name, state] of states)
      if (last.get(name) !== state.status)
        problems.push(`INDEX.jsonl says ${name} is ${last.get(name)}, its state ${state.status}`);
    // The fold cache (status --all) and the state files (status) agree with every state.json; a
    // group is one row holding its attempts.
    for (const args of [['--all'], ['--limit', '1000']]) {
      const status = await p.agentbox(['status', '--json', ...args]);
      if (status.code !== 0) problems.push(`status ${args.join(' ')} failed: ${status.stderr}`);
      const listed = JSON.parse(status.stdout) as { runs: Row[]; total: number };
      if (listed.total !== listed.runs.length) problems.push(`status ${args[0]}: total ${listed.total}`);
      const seen = listed.runs.flatMap((row) =>
        row.kind === 'group'
          ? row.attempts.map((a) => ({ name: a.run, status: a.status }))
          : [{ name: row.name, status: row.status }],
      );
      if (seen.length !== names.length || new Set(seen.map((r) => r.name)).size !== names.length)
        problems.push(`status ${args[0]} lists ${seen.length} runs of ${names.length}`);
      for (const row of listed.runs)
        if (row.kind === 'group' && row.status === 'ACTIVE') problems.push(`status: ${row.name} is ACTIVE`);
      for (const run of seen)
        if (run.status !== states.get(run.name ?? '')?.status)
          problems.push(`status ${args[0]} says ${run.name} is ${run.status}`);
    }
    if (fs.existsSync(agents('cache', 'index-fold.json'))) readJson(agents('cache', 'index-fold.json'));
    // INDEX.md: a row per run, with its status.
    const md = fs.readFileSync(agents('INDEX.md'), 'utf8');
    for (const [name, state] of states)
      if (!md.includes(`| [${name}](runs/${name}/) | ${state.summary.type} | ${state.status} |`))
        problems.push(`INDEX.md has no row for ${name} as ${state.status}`);
    // Pointers and latest name existing runs, in the status they follow.
    for (const link of ['latest', ...fs.readdirSync(agents('pointers')).map((l) => `pointers/${l}`)]) {
      const target = path.basename(fs.readlinkSync(agents(link)));
      const state = states.get(target);
      if (!state) problems.push(`${link} points at ${target}, not a run`);
      else if (POINTED[path.basename(link)]?.(state.status) === false)
        problems.push(`${link} points at ${target}, which is ${state.status}`);
    }
    // The main tree is as it was: the read-only runs' slash commands there are gone with them.
    const commands = path.join(p.repo.dir, '.claude', 'commands');
    const left = fs.existsSync(commands) ? fs.readdirSync(commands) : [];
    if (left.length > 0) problems.push(`left in .claude/commands: ${left.join(', ')}`);
    const changed = p.repo.git('status', '--porcelain').trim();
    if (changed) problems.push(`the main tree changed: ${changed}`);
    const markers = fs.existsSync(agents('active')) ? fs.readdirSync(agents('active')) : [];
    if (markers.length > 0) problems.push(`markers left in active/: ${markers.join(', ')}`);
    problems.push(...worktreeProblems(states));
    return problems;
  }

  /** Every fix run's worktree and branch its own, known to git; no worktree git knows without a run. */
  function worktreeProblems(states: Map<string, Record<string, any>>): string[] {
    const problems: string[] = [];
    const listed = p.repo
      .git('worktree', 'list', '--porcelain')
      .split('\n\n')
      .filter(Boolean)
      .map((record) => ({
        path: /^worktree (.*)$/m.exec(record)![1]!,
        branch: /^branch refs\/heads\/(.*)$/m.exec(record)?.[1] ?? null,
      }));
    const fixes = [...states].filter(([, s]) => s.summary.type === 'fix');
    for (const [name, state] of fixes) {
      const mine = listed.filter((w) => w.path === state.worktree_path);
      if (mine.length !== 1 || mine[0]!.branch !== `agentbox/${name}` || state.branch !== `agentbox/${name}`)
        problems.push(`${name}: worktree ${state.worktree_path} on ${JSON.stringify(mine)}`);
      if (!fs.existsSync(path.join(state.worktree_path, 'src/app.ts')))
        problems.push(`${name}: worktree ${state.worktree_path} is not there`);
      if (state.status === 'REVIEW' && p.repo.git('rev-parse', state.branch).trim() !== state.result_commit)
        problems.push(`${name}: its branch is not at its result commit`);
    }
    const others = listed.filter(
      (w) => w.path !== p.repo.dir && !fixes.some(([, s]) => s.worktree_path === w.path),
    );
    if (others.length > 0) problems.push(`worktrees of no run: ${JSON.stringify(others)}`);
    const branches = p.repo.git('branch', '--list', '--format=%(refname:short)', 'agentbox/*').split('\n');
    const stray = branches.filter((b) => b && !fixes.some(([name]) => b === `agentbox/${name}`));
    if (stray.length > 0) problems.push(`branches of no run: ${stray.join(', ')}`);
    return problems;
  }

  /** A group's members: a distinct run each, in its place, the group ended. */
  function groupProblems(task: string, attempts: number): string[] {
    const { state, meta, dir } = readGroupFiles(p.repo.dir, groupOfTask(p.repo.dir, task));
    const problems: string[] = [];
    if (state.status !== 'ENDED') problems.push(`group ${task}: ${state.status}`);
    const runs = state.members.map((m: { run: string | null }) => m.run);
    if (runs.length !== attempts || new Set(runs).size !== attempts || runs.includes(null))
      problems.push(`group ${task}: members ${JSON.stringify(state.members)}`);
    for (const [i, run] of runs.entries()) {
      if (!run) continue;
      const group = readJson(agents('runs', run, 'state.json')).summary?.group;
      if (group?.id !== meta.group_id || group?.attempt !== i + 1)
        problems.push(`${run}: summary.group ${JSON.stringify(group)}, member ${i + 1}`);
      if (!fs.existsSync(path.join(dir, 'patches', `agent_${i + 1}.patch`)))
        problems.push(`group ${task}: no patches/agent_${i + 1}.patch`);
    }
    return problems;
  }

  /** The end state each play leads to. */
  const endOf = (play: Play) => (play === 'pass' ? 'REVIEW' : 'ABORTED');

  const groupRuns = (task: string, plays: readonly Play[]) =>
    new Map<string, string>(
      readGroupFiles(p.repo.dir, groupOfTask(p.repo.dir, task)).state.members.map(
        (m: { run: string }, i: number) => [m.run, endOf(plays[i]!)],
      ),
    );

  it('8 attempts at once: each ends as its script leads, in its own worktree, the ledger whole', async () => {
    const task = 'LOAD-EIGHT set x';
    const plays: Play[] = ['pass', 'violate', 'pass', 'fail', 'pass', 'violate', 'pass', 'pass'];
    p.server.setRules(attemptRules(task, plays));
    const result = await p.agentbox(['fix', task, '--attempts', '8', '--max-parallel', '8'], {
      timeoutMs: 300_000,
    });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const expected = groupRuns(task, plays);
    // One process ran them all: every attempt's state names it.
    const pids = new Set([...expected.keys()].map((r) => p.state(r).pid));
    expect(pids.size).toBe(1);
    expect([...groupProblems(task, 8), ...(await ledgerProblems(expected))]).toEqual([]);
    await expectNoProcessesLeft(p.tag, 10_000);
  }, 360_000);

  it('20 runs of every type started together, a group of 3 among them: all end, the ledger whole', async () => {
    const before = new Map(p.runs().map((name) => [name, p.state(name).status as string]));
    const group = 'LOAD-GROUP set x';
    const plays: Play[] = ['pass', 'violate', 'pass'];
    const singles = [
      ...[0, 1, 2, 3, 4].map((i) => ({ type: 'scout', task: `LOAD-SCOUT-${i} where is x?`, end: 'DONE' })),
      ...[0, 1, 2, 3].map((i) => ({ type: 'plan', task: `LOAD-PLAN-${i} plan x`, end: 'DONE' })),
      ...[0, 1, 2, 3].map((i) => ({ type: 'review', task: `LOAD-REVIEW-${i} review x`, end: 'DONE' })),
      ...[0, 1, 2, 3].map((i) => ({ type: 'fix', task: `LOAD-FIX-${i} set x`, end: 'REVIEW' })),
    ];
    p.server.setRules([
      ...attemptRules(group, plays),
      ...singles.flatMap(({ type, task }): Rule[] =>
        type === 'fix'
          ? passingFix(task)
          : [{ when: { anyText: task }, reply: text(`1. ${task}: x is in src/app.ts.`) }],
      ),
    ]);
    // Every other one detached; the rest hold their terminal until their run ends.
    const started = [
      ...singles.map(({ type, task }, i) => start([type, task, ...(i % 2 ? ['--detach'] : [])])),
      start(['fix', group, '--attempts', '3', '--detach']),
    ];
    const codes = await Promise.all(started.map((s) => s.exited));
    expect(codes, started.map((s) => s.output()).join('\n')).toEqual(started.map(() => 0));
    // The detached ones end on their own: their runs and the group leave ACTIVE.
    const runOf = (task: string) => p.runs().find((name) => p.state(name).summary?.task === task);
    const deadline = Date.now() + 240_000;
    const settled = () =>
      singles.every(({ task }) => {
        const run = runOf(task);
        return run !== undefined && p.state(run).status !== 'ACTIVE';
      }) && readGroupFiles(p.repo.dir, groupOfTask(p.repo.dir, group)).state.status === 'ENDED';
    while (!settled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    await expectNoProcessesLeft(p.tag, 30_000);
    const expected = new Map([
      ...before,
      ...singles.map(({ task, end }) => [runOf(task)!, end] as const),
      ...groupRuns(group, plays),
    ]);
    expect(expected.size).toBe(before.size + 20);
    expect([...groupProblems(group, 3), ...(await ledgerProblems(expected))]).toEqual([]);
  }, 420_000);

  /** `agentbox <args>` as its own process, started now. */
  function start(args: string[]) {
    trustAsIs(p.repo.dir, p.env);
    const child = spawn(process.execPath, [AGENTBOX_BIN, ...args], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = `agentbox ${args.join(' ')}:\n`;
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { exited, output: () => output };
  }
});
