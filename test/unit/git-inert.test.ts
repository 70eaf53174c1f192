import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EMPTY_SUMMARY } from '../../src/claude/stream.js';
import { applyMerge, prepareMerge } from '../../src/gate/merge.js';
import { takeCheckpoint } from '../../src/git/checkpoint.js';
import { runGit } from '../../src/git/exec.js';
import { inertEnv } from '../../src/git/inert.js';
import { findNestedGit } from '../../src/git/nested.js';
import { exportPatch } from '../../src/git/patch.js';
import { inspectPatch } from '../../src/git/sensitive.js';
import { addWorktree } from '../../src/git/worktree.js';
import { EventLog } from '../../src/ledger/events.js';
import {
  createRun,
  ensureLedger,
  openLedger,
  readRun,
  readState,
  updateState,
} from '../../src/ledger/index.js';
import { finalizeRun } from '../../src/run/end/finalize.js';
import { runDetail } from '../../src/web/detail.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * agentbox's git is inert to what an agent or a cloned repository wrote (src/git/inert.ts,
 * src/git/nested.ts). Each attack plants a command that touches a marker file; plain git (the
 * test's own, no hardening) shows the plant works, agentbox's runner shows it does not run.
 */

const env = { ...process.env, ...GIT_ENV } as Record<string, string>;
const plain = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
/** A command for a git config value that leaves `marker` behind, whatever git makes of its result. */
const plant = (marker: string) => `touch ${marker}; false`;

/**
 * A repository with a submodule `sm` (a clone of `sub`), pushed to a bare `origin` it can fetch
 * from and push to.
 */
function superproject() {
  const sub = gitRepo({ files: { 'a.txt': 'a\n' } });
  const origin = gitRepo({ bare: true });
  const repo = gitRepo();
  plain(repo.dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.dir, 'sm');
  plain(repo.dir, 'commit', '-qm', 'sm');
  plain(repo.dir, 'remote', 'add', 'origin', origin.dir);
  plain(repo.dir, 'push', '-q', 'origin', 'main');
  // A submodule fetched from a path: git allows the file protocol to the user only.
  repo.git('config', 'protocol.file.allow', 'always');
  return { repo, sub, origin };
}

/**
 * A superproject whose person's config asks git into submodules at every turn, with changes in its
 * submodule for each command to find: a commit git has not recorded, a new file, and a recorded
 * commit no remote has (push's check).
 */
function personsRepository(): TestRepo {
  const { repo } = superproject();
  repo.git('config', 'submodule.recurse', 'true');
  repo.git('config', 'status.submoduleSummary', 'true');
  repo.git('config', 'fetch.recurseSubmodules', 'yes');
  repo.git('config', 'push.recurseSubmodules', 'check');
  plain(path.join(repo.dir, 'sm'), 'commit', '-q', '--allow-empty', '-m', 'not pushed');
  plain(repo.dir, 'commit', '-qam', 'move sm');
  plain(path.join(repo.dir, 'sm'), 'commit', '-q', '--allow-empty', '-m', 'not recorded');
  fs.writeFileSync(path.join(repo.dir, 'sm', 'new.txt'), 'x\n');
  return repo;
}

/** How many git processes ran in the repository at `dir`, from a GIT_TRACE2_EVENT file. */
function gitsIn(trace: string, dir: string): number {
  if (!fs.existsSync(trace)) return 0;
  const worktree = fs.realpathSync(dir);
  return fs
    .readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((e) => e.event === 'def_repo' && e.repo === 1 && e.worktree === worktree).length;
}

/** A fix run's ledger entry in `repo`, started at its HEAD. */
async function fixRunIn(repo: TestRepo, task: string) {
  ensureLedger(repo.dir);
  const ledger = openLedger(repo.dir);
  const base = repo.git('rev-parse', 'HEAD').trim();
  const run = await createRun(ledger, { type: 'fix', task, envelope: ENVELOPE, repoShaStart: base });
  return { ledger, base, run };
}

afterEach(() => vi.unstubAllEnvs());

describe('the one git runner is inert', () => {
  it('runs none of a repository config’s fsmonitor, pager, external diff or hooks', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const marks = tempDir('agentbox-marks-');
    const script = path.join(marks, 'run.sh');
    fs.writeFileSync(script, `#!/bin/sh\ntouch ${marks}/"$1"\n`, { mode: 0o755 });
    repo.git('config', 'core.fsmonitor', `${script} fsmonitor`);
    repo.git('config', 'core.pager', `${script} pager; cat`);
    repo.git('config', 'diff.external', `${script} external`);
    fs.writeFileSync(path.join(repo.dir, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\n${script} hook\n`, {
      mode: 0o755,
    });
    repo.write('a.txt', 'b\n');
    repo.git('config', 'diff.shout.textconv', `${script} textconv`);
    repo.git('config', 'diff.shout.command', `${script} driver`);
    repo.write('.gitattributes', 'a.txt diff=shout\n');
    const call = { cwd: repo.dir, env, vars: { GIT_PAGER: `${script} gitpager; cat` } };
    expect((await runGit(['-p', 'status'], call)).exitCode).toBe(0);
    const exported = await exportPatch(repo.dir, { base: 'HEAD' });
    expect(exported.files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt']);
    expect(exported.patch.toString()).toContain('-a\n+b\n');
    expect((await runGit(['commit', '-qam', 'x'], call)).exitCode).toBe(0);
    expect(fs.readdirSync(marks)).toEqual(['run.sh']);
    // The same plants, run by plain git: each one works (git pages only on a terminal).
    plain(repo.dir, 'status');
    repo.write('a.txt', 'c\n');
    plain(repo.dir, 'diff');
    plain(repo.dir, 'commit', '-qam', 'y');
    expect(fs.readdirSync(marks).sort()).toEqual(['driver', 'fsmonitor', 'hook', 'run.sh']);
  });

  it('enters no submodule, whatever the person’s config asks: no git runs inside one', async () => {
    // The person's own config may ask git into submodules at every turn; agentbox's settings
    // (src/git/inert.ts) keep it out. Each is needed (checked by taking each out of INERT_CONFIG
    // in turn): without submodule.recurse=false, `reset` runs git in `sm`; without
    // diff.ignoreSubmodules=dirty, `status` and `diff`; without status.submoduleSummary=false,
    // `status`. fetch.recurseSubmodules=false and push.recurseSubmodules=no each stand in for
    // submodule.recurse=false and the other way round (git's fetch and push read both): without
    // submodule.recurse and one of them, `fetch` (or `push`) runs git in `sm`.
    // NOTE: `add -A` is not in the list: it runs `git status` in a submodule whose HEAD is the
    // commit recorded, to see whether its content changed, and no setting stops that: the next
    // test shows what holds there.
    const calls = [
      ['status'],
      ['diff', 'HEAD'],
      ['reset', '-q', '--hard', 'HEAD'],
      ['fetch', '-q', 'origin'],
      ['push', '-q', 'origin', 'HEAD:refs/heads/x'],
    ];
    /** The calls that ran a git in `sm`, each on a repository of its own as the person left it. */
    const template = personsRepository();
    const entering = async (run: (args: string[], cwd: string, trace: string) => Promise<unknown>) => {
      const entered: string[] = [];
      for (const args of calls) {
        const dir = path.join(tempDir('agentbox-copy-'), 'repo');
        fs.cpSync(template.dir, dir, { recursive: true });
        const trace = path.join(tempDir('agentbox-trace-'), 'events');
        await run(args, dir, trace);
        if (gitsIn(trace, path.join(dir, 'sm')) > 0) entered.push(args.join(' '));
      }
      return entered;
    };
    expect(
      await entering((args, cwd, trace) => runGit(args, { cwd, env: { ...env, GIT_TRACE2_EVENT: trace } })),
    ).toEqual([]);
    // The same calls by plain git (the person's config alone): each one runs git in `sm` (push's
    // check then refuses: the submodule's commit is on no remote).
    const byPlainGit = await entering(async (args, cwd, trace) =>
      spawnSync('git', args, { cwd, env: { ...env, GIT_TRACE2_EVENT: trace }, stdio: 'ignore' }),
    );
    expect(byPlainGit).toEqual(calls.map((a) => a.join(' ')));
  });

  it('a submodule’s own fsmonitor never runs, also in the git that add or a status asking for it starts there', async () => {
    const { repo } = superproject();
    const marker = path.join(tempDir('agentbox-marks-'), 'fired');
    plain(path.join(repo.dir, 'sm'), 'config', 'core.fsmonitor', plant(marker));
    fs.writeFileSync(path.join(repo.dir, 'sm', 'new.txt'), 'x\n');
    // Both run `git status` in sm (seen in GIT_TRACE2): core.fsmonitor=false goes with it, in
    // GIT_CONFIG_PARAMETERS (and core.hooksPath=/dev/null with it).
    for (const args of [
      ['add', '-A'],
      ['status', '--ignore-submodules=none'],
    ]) {
      const trace = path.join(tempDir('agentbox-trace-'), 'events');
      await runGit(args, { cwd: repo.dir, env: { ...env, GIT_TRACE2_EVENT: trace } });
      expect(gitsIn(trace, path.join(repo.dir, 'sm')), args.join(' ')).toBe(1);
    }
    expect(fs.existsSync(marker)).toBe(false);
    plain(repo.dir, 'status');
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('replaces config from the environment and removes GIT_EXTERNAL_DIFF; keeps the rest', () => {
    const out = inertEnv({
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor=touch /tmp/x'",
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: 'touch /tmp/y',
      GIT_EXTERNAL_DIFF: 'touch /tmp/z',
      GIT_PAGER: 'less',
      GIT_SSH_COMMAND: 'ssh -i key',
      HOME: '/home/me',
    });
    expect(out.GIT_CONFIG_PARAMETERS).toContain("'core.fsmonitor=false'");
    expect(out.GIT_CONFIG_PARAMETERS).toContain("'core.hooksPath=/dev/null'");
    expect(out.GIT_CONFIG_PARAMETERS).not.toContain('touch');
    for (const name of ['GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_EXTERNAL_DIFF'])
      expect(out).not.toHaveProperty(name);
    expect(out).toMatchObject({ GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: 'ssh -i key' });
    expect(inertEnv({}, { personHooksPath: true }).GIT_CONFIG_PARAMETERS).not.toContain('hooksPath');
  });
});

describe('a .git below the worktree’s root is never followed', () => {
  it('finds folders and files named .git, not the root’s, not through symlinks', () => {
    const dir = tempDir();
    for (const d of ['.git', 'a/.git', 'b/c/.git', 'a/deeper/.git', 'real/.git'])
      fs.mkdirSync(path.join(dir, d), { recursive: true });
    fs.mkdirSync(path.join(dir, 'f'));
    fs.writeFileSync(path.join(dir, 'f', '.git'), 'gitdir: /elsewhere\n');
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    fs.mkdirSync(path.join(dir, 'g'));
    fs.symlinkSync(path.join(dir, 'real', '.git'), path.join(dir, 'g', '.git'));
    expect(findNestedGit(dir)).toEqual([
      { path: 'a', kind: 'folder' },
      { path: 'a/deeper', kind: 'folder' },
      { path: 'b/c', kind: 'folder' },
      { path: 'f', kind: 'file' },
      { path: 'g', kind: 'link' },
      { path: 'real', kind: 'folder' },
    ]);
  });

  it('a checkpoint leaves nested repositories out, and does not fail on one without a commit', async () => {
    const repo = gitRepo();
    plain(repo.dir, 'init', '-q', 'inner');
    repo.write('inner/f.txt', 'x\n');
    repo.write('b.txt', 'b\n');
    const taken = await takeCheckpoint(repo.dir, 'r', { env });
    const tree = plain(repo.dir, 'ls-tree', '-r', '--name-only', taken.commit);
    expect(tree.split('\n').filter(Boolean)).toEqual(['README.md', 'b.txt']);
    expect(fs.existsSync(path.join(repo.dir, 'inner', '.git'))).toBe(true);
  });

  it('a run’s end sets each aside, leaves it out of the patch, logs and reports it, and ends normally', async () => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    const repo = gitRepo({ files: { 'sm/.keep': '' } });
    const sub = gitRepo();
    const marker = path.join(tempDir('agentbox-marks-'), 'fired');
    const { ledger, base, run } = await fixRunIn(repo, 'fix it');
    const wt = path.join(tempDir('agentbox-wt-'), 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'run', base });
    // Four spellings: a repository without a commit, one with a commit (a gitlink to git add), a
    // .git file pointing at a git dir elsewhere, and git init in a folder the tree already has.
    plain(wt, 'init', '-q', 'inner');
    plain(path.join(wt, 'inner'), 'config', 'core.fsmonitor', plant(marker));
    fs.writeFileSync(path.join(wt, 'inner', 'f.txt'), 'x\n');
    plain(wt, 'clone', '-q', sub.dir, 'cloned');
    plain(path.join(wt, 'cloned'), 'config', 'core.fsmonitor', plant(marker));
    fs.mkdirSync(path.join(wt, 'linked'));
    fs.writeFileSync(path.join(wt, 'linked', '.git'), `gitdir: ${path.join(sub.dir, '.git')}\n`);
    plain(path.join(wt, 'sm'), 'init', '-q');
    plain(path.join(wt, 'sm'), 'config', 'core.fsmonitor', plant(marker));
    fs.writeFileSync(path.join(wt, 'fixed.txt'), 'fixed\n');
    const done = await finalizeRun({
      ledger,
      meta: run.meta,
      runDir: run.dir,
      worktree: wt,
      exit: { code: 0, signal: null },
      summary: EMPTY_SUMMARY,
      stop: { kind: 'finished' },
      denials: [],
      durationMs: 1000,
    });
    // No result from claude here (an empty stream): what matters is that the export did not fail.
    expect(done.failure?.kind).not.toBe('io_error');
    expect(done.failure?.message ?? '').not.toContain('could not export');
    expect(done.changes?.files.map((f) => f.path)).toEqual(['fixed.txt']);
    const patch = fs.readFileSync(path.join(run.dir, 'changes.patch'), 'utf8');
    expect(patch).not.toMatch(/inner|cloned|linked|\bsm\b/);
    const nested = new EventLog(run.dir).read().filter((e) => e.event === 'nested_git');
    expect(nested.map((e) => [e.path, e.kind])).toEqual([
      ['cloned', 'folder'],
      ['inner', 'folder'],
      ['linked', 'file'],
      ['sm', 'folder'],
    ]);
    for (const e of nested)
      expect(fs.existsSync(path.join(run.dir, String(e.moved_to), 'config')) || e.kind === 'file').toBe(true);
    const report = fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8');
    expect(report).toContain('## Nested repositories');
    expect(report).toContain('- `inner/` (a .git folder) → raw/nested-git/');
    const page = await runDetail(ledger, repo.dir, run.name);
    expect(page.nested.map((n) => n.path)).toEqual(['cloned', 'inner', 'linked', 'sm']);
    expect(findNestedGit(wt)).toEqual([]);
    expect(fs.readFileSync(path.join(wt, 'inner', 'f.txt'), 'utf8')).toBe('x\n');
    expect(readState(run.dir)?.failure?.kind).not.toBe('io_error');
    // The person's own git, with no hardening at all, in the worktree afterwards.
    plain(wt, 'status');
    plain(wt, 'add', '-A');
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe('gitlinks', () => {
  it('merge lists a gitlink as sensitive, and counts and commits only what landed', async () => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    const repo = gitRepo();
    const { ledger, run } = await fixRunIn(repo, 'link');
    const sha = '1'.repeat(40);
    const blob = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'; // the empty file
    fs.writeFileSync(
      path.join(run.dir, 'changes.patch'),
      [
        'diff --git a/sm b/sm',
        'new file mode 160000',
        `index 0000000..${sha}`,
        '--- /dev/null',
        '+++ b/sm',
        '@@ -0,0 +1 @@',
        `+Subproject commit ${sha}`,
        'diff --git a/f.txt b/f.txt',
        'new file mode 100644',
        `index 0000000..${blob}`,
        '',
      ].join('\n'),
    );
    await updateState(ledger, run.name, { status: 'REVIEW' });
    const plan = await prepareMerge(repo.dir, readRun(ledger, run.name));
    expect(plan.sensitive.map((c) => [c.path, c.kind])).toEqual([['sm', 'gitlink']]);
    const done = await applyMerge(plan, { commit: true });
    expect(done.changed).toBe(1);
    expect(done.files).toEqual(['f.txt']);
    expect(repo.git('show', '--name-only', '--format=', 'HEAD').trim()).toBe('f.txt');
  });

  it('a gitlink in a patch is sensitive: merge does not apply it', () => {
    const sha = '1'.repeat(40);
    const patch = [
      'diff --git a/sm b/sm',
      'new file mode 160000',
      `index 0000000..${sha}`,
      '--- /dev/null',
      '+++ b/sm',
      '@@ -0,0 +1 @@',
      `+Subproject commit ${sha}`,
      'diff --git a/lib b/lib',
      `index ${'2'.repeat(40)}..${sha} 160000`,
      '--- a/lib',
      '+++ b/lib',
      '@@ -1 +1 @@',
      `-Subproject commit ${'2'.repeat(40)}`,
      `+Subproject commit ${sha}`,
      '',
    ].join('\n');
    const { sensitive, refused } = inspectPatch(patch, '/repo');
    expect(refused).toEqual([]);
    expect(sensitive.map((c) => [c.path, c.kind])).toEqual([
      ['sm', 'gitlink'],
      ['lib', 'gitlink'],
    ]);
  });
});
