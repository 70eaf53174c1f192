import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run as cliRun } from '../../src/cli/run.js';
import { merge } from '../../src/commands/merge.js';
import { type CommandContext, memoryIo } from '../../src/context.js';
import { createGroup, readGroup, updateGroupState } from '../../src/group/store.js';
import { EventLog } from '../../src/ledger/events.js';
import {
  createRun,
  ensureLedger,
  type Ledger,
  openLedger,
  readRun,
  updateState,
} from '../../src/ledger/index.js';
import { mergeAction } from '../../src/web/actions.js';
import { mergeGroupAction } from '../../src/web/group-merge.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from './fixtures/ledger.js';
import { agentPatch, reviewRun } from './fixtures/review-run.js';

/*
 * Issue 37 item 3: the run's code never runs as the person at the gate. Every merge route — the
 * CLI's `merge --commit`, `merge <group>`, the web UI's run and group merge — commits in the
 * person's own repository with their config; each attack below makes one of the things git runs
 * at a commit (a hook, a hooks folder in the tree, a filter the person defined) run a file the
 * agent wrote, which leaves a mark outside the repository. No mark may appear.
 */

/** A hook or script that leaves `name` in the marks folder, with the uid it ran as. */
const marking = (marks: string, name: string) => `#!/bin/sh\necho "${name} $(id -u)" >> '${marks}/${name}'\n`;

/** A person's hook that runs a script of the repository, as `.git/hooks/pre-commit` often does. */
const runsScript = (script: string) => `#!/bin/sh\nsh ${script} "$@"\n`;

const marksIn = (marks: string) => fs.readdirSync(marks).sort();

interface Setup {
  /** Committed before the run starts. */
  readonly files: Record<string, string>;
  /** What the agent writes in its worktree (path → content). */
  readonly agent: Record<string, string>;
  /** The person's own set-up of their repository, after the run ended (hooks, config). */
  readonly person?: (repo: TestRepo, marks: string) => void;
}

/** A person's hook file in the repository's git dir (or anywhere), executable. */
function hook(repo: TestRepo, file: string, content: string): void {
  const at = path.isAbsolute(file) ? file : path.join(repo.dir, file);
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.writeFileSync(at, content, { mode: 0o755 });
}

/** A repository with a fix run in REVIEW (runs.verify passed) whose patch is what `agent` wrote. */
async function fixRun(setup: Setup) {
  const marks = tempDir('agentbox-marks-');
  const made = await reviewRun({ files: setup.files, agent: setup.agent, task: 'fix the lint' });
  setup.person?.(made.repo, marks);
  return { ...made, marks };
}

function context(cwd: string) {
  const io = memoryIo();
  const ctx: CommandContext = { cwd, env: {}, io };
  return { ctx, io };
}

const events = (dir: string) => new EventLog(dir).read();
const committed = (repo: TestRepo) => repo.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n');

/** The report: `.git/hooks/pre-commit` runs `sh scripts/lint.sh`; the agent rewrote it. */
const lintHook = (extra: Partial<Setup> = {}): Setup => ({
  files: { 'scripts/lint.sh': 'exit 0\n', 'src/a.ts': 'a\n' },
  agent: { 'src/a.ts': 'b\n' },
  person: (repo) => hook(repo, '.git/hooks/pre-commit', runsScript('scripts/lint.sh')),
  ...extra,
});
const rewritesLint = (marks: string) => ({
  'scripts/lint.sh': marking(marks, 'lint').replace('#!/bin/sh\n', ''),
});

describe('merge --commit runs none of the person’s git hooks on the run’s files', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('a pre-commit hook that runs a repository script the agent rewrote: not run, said, logged', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun(lintHook({ agent: { 'src/a.ts': 'b\n', ...rewritesLint(marks) } }));
    // Work of the person's own, staged: neither merge's commit nor the printed command takes it.
    r.repo.write('mine.txt', 'mine\n');
    r.repo.git('add', 'mine.txt');
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true })).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(committed(r.repo)).toEqual(['scripts/lint.sh', 'src/a.ts']);
    const head = r.repo.git('rev-parse', 'HEAD').trim();
    expect(io.stdout.split('\n').slice(-6)).toEqual([
      `✓ merged 2 file(s) into ${r.repo.dir} (branch main) — commit ${head.slice(0, 12)}`,
      expect.stringMatching(/^ {2}patch sha256 [0-9a-f]{64}$/),
      '  your git hooks did not run for this commit: pre-commit (.git/hooks)',
      '  they may run the files the run wrote, as you; once you have read them: git commit --amend --no-edit --only',
      `  next: run your tests; then remove the run's worktree and branch: agentbox discard ${r.id} (or agentbox gc)`,
      '',
    ]);
    expect(events(r.dir).find((e) => e.event === 'merge_git')).toMatchObject({
      hooks_not_run: ['pre-commit'],
      hooks_dir: '.git/hooks',
      filters_off: [],
      run_hooks: 'git commit --amend --no-edit --only',
    });
    // The command it prints runs them: the person's hook, and through it the agent's script.
    execFileSync('git', ['commit', '--amend', '--no-edit', '--only', '-q'], { cwd: r.repo.dir });
    expect(marksIn(marks)).toEqual(['lint']);
    expect(committed(r.repo)).toEqual(['scripts/lint.sh', 'src/a.ts']);
    expect(r.repo.git('diff', '--cached', '--name-only').trim()).toBe('mine.txt');
  });

  it('--json says which hooks did not run', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun(lintHook({ agent: { 'src/a.ts': 'b\n', ...rewritesLint(marks) } }));
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true, json: true })).toBe(0);
    expect(JSON.parse(io.stdout)).toMatchObject({ hooksRan: false, hooksNotRun: ['pre-commit'] });
    expect(marksIn(marks)).toEqual([]);
  });

  it('a core.hooksPath folder inside the repository, whose hook runs a script the agent rewrote', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun({
      files: { 'tools/hooks/pre-commit': runsScript('scripts/check.sh'), 'scripts/check.sh': 'exit 0\n' },
      agent: { 'scripts/check.sh': marking(marks, 'check') },
      person: (repo) => {
        fs.chmodSync(path.join(repo.dir, 'tools/hooks/pre-commit'), 0o755);
        repo.git('config', 'core.hooksPath', 'tools/hooks');
      },
    });
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true })).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(io.stdout).toContain('your git hooks did not run for this commit: pre-commit (tools/hooks)');
  });

  it('every hook a commit runs (commit-msg, post-commit and the rest): none runs', async () => {
    const marks = tempDir('agentbox-marks-');
    const names = [
      'pre-commit',
      'prepare-commit-msg',
      'commit-msg',
      'post-commit',
      'post-index-change',
      'reference-transaction',
    ];
    const r = await fixRun({
      files: { 'scripts/on-commit.sh': 'exit 0\n', 'src/a.ts': 'a\n' },
      agent: { 'scripts/on-commit.sh': `echo "$0" >> '${marks}/ran'\n`, 'src/a.ts': 'b\n' },
      person: (repo) => {
        for (const name of names) hook(repo, `.git/hooks/${name}`, runsScript('scripts/on-commit.sh'));
      },
    });
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true })).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(io.stdout).toContain(
      `your git hooks did not run for this commit: ${[...names].sort().join(', ')} (.git/hooks)`,
    );
  });

  it('without --commit nothing is committed and no hook runs; the next step names the hooks git will run', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun(lintHook({ agent: { 'src/a.ts': 'b\n', ...rewritesLint(marks) } }));
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true })).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(io.stdout).toContain(
      'commit the change (git add -p && git commit; your pre-commit hook runs then, as you, on these files)',
    );
  });
});

describe('merge runs no filter the person defined on the run’s files', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('a .gitattributes the patch adds maps new files to the person’s filters: neither runs', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun({
      files: { 'scripts/clean.sh': 'cat\n' },
      agent: {
        '.gitattributes': '*.txt filter=strip\n*.md filter=mine\n',
        'notes.txt': 'text\n',
        'notes.md': 'doc\n',
        'scripts/clean.sh': `echo clean >> '${marks}/strip'\ncat\n`,
      },
      person: (repo) => {
        // A filter that runs a script of the repository (as nbstripout's `python -m` finds the
        // folder's modules first), and one of the person's own commands.
        repo.git('config', 'filter.strip.clean', 'sh scripts/clean.sh');
        repo.git('config', 'filter.strip.smudge', 'sh scripts/clean.sh');
        repo.git('config', 'filter.mine.clean', `sh -c 'echo mine >> ${marks}/mine; cat'`);
        repo.git('config', 'filter.mine.required', 'true');
      },
    });
    const { ctx, io } = context(r.repo.dir);
    expect(await merge(ctx, r.id, { yes: true, commit: true, allowSensitive: true })).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(committed(r.repo)).toEqual(['.gitattributes', 'notes.md', 'notes.txt', 'scripts/clean.sh']);
    // Committed as the agent wrote them, not through a filter.
    expect(r.repo.git('show', 'HEAD:notes.txt')).toBe('text\n');
    expect(io.stdout).toContain('  not run through your git filters: notes.md (mine), notes.txt (strip)');
    expect(events(r.dir).find((e) => e.event === 'merge_git')).toMatchObject({
      filters_off: ['mine', 'strip'],
      unfiltered: [
        { path: 'notes.md', driver: 'mine' },
        { path: 'notes.txt', driver: 'strip' },
      ],
    });
    // The filter is live for the person's own git (so the test can fail).
    r.repo.write('notes.txt', 'more\n');
    r.repo.git('add', 'notes.txt');
    expect(marksIn(marks)).toContain('strip');
  });

  it('a change to a file the person’s attributes send through a filter is refused, named, logged', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun({
      files: { '.gitattributes': '*.dat filter=strip\n', 'data.dat': 'one\n', 'src/a.ts': 'a\n' },
      agent: { 'data.dat': 'two\n', 'src/a.ts': 'b\n' },
      person: (repo) => {
        repo.git('config', 'filter.strip.clean', `sh -c 'echo clean >> ${marks}/strip; cat'`);
        repo.git('config', 'filter.strip.smudge', `sh -c 'echo smudge >> ${marks}/strip; cat'`);
      },
    });
    const head = r.repo.git('rev-parse', 'HEAD');
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true }).catch((e) => e);
    expect(error).toMatchObject({
      code: 'MERGE_REFUSED',
      message: `refusing to merge ${r.name}: your git filter would run on what the run wrote\n  data.dat  filter strip`,
    });
    expect(error.hint).toContain(`git apply ${path.join(r.dir, 'changes.patch')}`);
    expect(error.hint).toContain(`agentbox merge ${r.id} --mark-merged`);
    expect(marksIn(marks)).toEqual([]);
    expect(r.repo.read('data.dat')).toBe('one\n');
    expect(r.repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(readRun(r.ledger, r.name).state?.status).toBe('REVIEW');
    expect(events(r.dir).find((e) => e.event === 'merge_refused')).toMatchObject({
      reason: 'filter',
      detail: 'data.dat (strip)',
    });
  });
});

describe('merge applies no change to a config file the person’s git includes', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  // The repository shares git settings in a file the person includes (`git config include.path
  // ../tools/git.config`); the agent's version signs commits with a program of its own.
  const signing = '[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = tools/sign\n';

  it.each([
    ['a file the repository has', { 'tools/git.config': '# shared settings\n' }],
    ['a file that does not exist yet', {}],
  ])('%s: refused, named, logged; nothing runs', async (_name, files) => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun({
      files: { 'src/a.ts': 'a\n', ...files },
      agent: { 'tools/git.config': signing, 'tools/sign': marking(marks, 'sign'), 'src/a.ts': 'b\n' },
      person: (repo) => repo.git('config', 'include.path', '../tools/git.config'),
    });
    const head = r.repo.git('rev-parse', 'HEAD');
    const { ctx } = context(r.repo.dir);
    const error = await merge(ctx, r.id, { yes: true, commit: true, allowSensitive: true }).catch((e) => e);
    expect(marksIn(marks)).toEqual([]);
    expect(error).toMatchObject({
      code: 'MERGE_REFUSED',
      message: `refusing to merge ${r.name}: it changes a file your git config includes\n  tools/git.config  git config (include.path)`,
    });
    expect(r.repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(r.repo.read('src/a.ts')).toBe('a\n');
    expect(events(r.dir).find((e) => e.event === 'merge_refused')).toMatchObject({
      reason: 'git_config',
      detail: 'tools/git.config',
    });
  });
});

describe('the web UI’s merge commits with no hook of the person’s', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('POST /api/runs/<run>/merge with commit', async () => {
    const marks = tempDir('agentbox-marks-');
    const r = await fixRun(lintHook({ agent: { 'src/a.ts': 'b\n', ...rewritesLint(marks) } }));
    const merged = await mergeAction({ root: r.repo.dir, ledger: r.ledger, env: {} }, r.id, { commit: true });
    expect(marksIn(marks)).toEqual([]);
    expect(merged).toMatchObject({ hooksRan: false, hooksNotRun: ['pre-commit'] });
    expect(committed(r.repo)).toEqual(['scripts/lint.sh', 'src/a.ts']);
    expect(events(r.dir).find((e) => e.event === 'merge_git')).toMatchObject({
      hooks_not_run: ['pre-commit'],
    });
  });
});

/** A group of two attempts in REVIEW (both verified); attempt 1 writes `agent`, attempt 2 a file of its own. */
async function hookedGroup(marks: string) {
  const repo = gitRepo({
    files: { '.gitignore': '.agents/\n', 'scripts/lint.sh': 'exit 0\n', 'src/a.ts': 'a\n' },
  });
  ensureLedger(repo.dir);
  const ledger: Ledger = openLedger(repo.dir);
  const base = repo.git('rev-parse', 'HEAD').trim();
  const group = await createGroup(ledger, {
    task: 'fix the lint',
    attempts: 2,
    models: null,
    maxParallel: 2,
    firstPass: false,
    maxCostUsd: null,
    runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 50, model: null },
    repoShaStart: base,
  });
  const writes: Record<string, string>[] = [
    { 'src/a.ts': 'b\n', ...rewritesLint(marks) },
    { 'src/b.ts': 'b\n' },
  ];
  const runs: string[] = [];
  for (const [i, agent] of writes.entries()) {
    const handle = await createRun(ledger, {
      type: 'fix',
      task: 'fix the lint',
      envelope: ENVELOPE,
      repoShaStart: base,
      options: { group: { id: group.meta.group_id, name: group.name, attempt: i + 1, attempts: 2 } },
    });
    fs.writeFileSync(path.join(handle.dir, 'changes.patch'), await agentPatch(repo, base, agent));
    await updateState(ledger, handle, {
      status: 'REVIEW',
      ended_at: handle.state.started_at,
      output: { applied: true, violations: 0, corrections: 0, verified: true } as never,
    });
    runs.push(handle.name);
  }
  await updateGroupState(ledger, group.name, () => ({
    status: 'ENDED',
    pid: null,
    pid_start: null,
    members: group.state.members.map((m, i) => ({ ...m, run: runs[i]! })),
  }));
  hook(repo, '.git/hooks/pre-commit', runsScript('scripts/lint.sh'));
  return { repo, ledger, group: readGroup(ledger, group.name), runs };
}

describe('a group’s merge commits with no hook of the person’s', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('agentbox merge <group> --attempt 1 --yes --commit', async () => {
    const marks = tempDir('agentbox-marks-');
    const { repo, group, runs, ledger } = await hookedGroup(marks);
    const io = memoryIo();
    const code = await cliRun(['merge', group.meta.group_id, '--attempt', '1', '--yes', '--commit'], {
      cwd: repo.dir,
      env: {},
      io,
    });
    expect(io.stderr).toBe('');
    expect(code).toBe(0);
    expect(marksIn(marks)).toEqual([]);
    expect(committed(repo)).toEqual(['scripts/lint.sh', 'src/a.ts']);
    expect(io.stdout).toContain('your git hooks did not run for this commit: pre-commit (.git/hooks)');
    expect(events(readRun(ledger, runs[0]!).dir).some((e) => e.event === 'merge_git')).toBe(true);
  });

  it('POST /api/groups/<group>/merge', async () => {
    const marks = tempDir('agentbox-marks-');
    const { repo, group, ledger } = await hookedGroup(marks);
    const merged = await mergeGroupAction({ root: repo.dir, ledger, env: {} }, group.meta.group_id, {
      attempt: 1,
      commit: true,
    });
    expect(marksIn(marks)).toEqual([]);
    expect(merged).toMatchObject({ attempt: 1, hooksRan: false, hooksNotRun: ['pre-commit'] });
    expect(committed(repo)).toEqual(['scripts/lint.sh', 'src/a.ts']);
  });
});
