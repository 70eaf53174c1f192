import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { commitMessage, merge, mergedNext } from '../../src/commands/merge.js';
import { type CommandContext, type Env, memoryIo } from '../../src/context.js';
import { AgentboxError } from '../../src/errors.js';
import { assertHuman } from '../../src/gate/gate.js';
import { exportPatch } from '../../src/git/patch.js';
import { addWorktree } from '../../src/git/worktree.js';
import { EventLog } from '../../src/ledger/events.js';
import { ensureLedger, openLedger, readRun, updateState } from '../../src/ledger/index.js';
import { isAlive, processStartTime } from '../../src/process/reap.js';
import { GIT_ENV, gitRepo, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { cli, create, idSequence } from './fixtures/ledger.js';

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

describe("commitMessage: git's convention, a subject line and the whole task in the body", () => {
  const subject = (task: string) => commitMessage(NAME, task).split('\n')[0]!;
  /** 78 characters of words, the 72nd in the middle of "boundary". */
  const LONG = 'make the session cache survive a restart of the worker at the word boundary ok';

  it('a short task: subject, a blank line, the run, the task, the run as a trailer', () => {
    expect(commitMessage(NAME, 'fix the login')).toBe(
      `fix the login\n\nMerged from agentbox run ${NAME}.\n\nTask:\nfix the login\n\nAgentbox-Run: ${NAME}\n`,
    );
  });

  it.each<[string, string, string]>([
    ['exactly 72 characters stays whole', 'a'.repeat(72), 'a'.repeat(72)],
    ['72 characters of words stay whole', `${'word '.repeat(13)}abcdefg`, `${'word '.repeat(13)}abcdefg`],
    ['a long line is cut at its last space within 72, no ellipsis', LONG, LONG.slice(0, 66)],
    [
      'a word ending at the 72nd character stays whole',
      `${'b'.repeat(40)} ${'c'.repeat(31)} more`,
      `${'b'.repeat(40)} ${'c'.repeat(31)}`,
    ],
    ['no dangling colon at the cut', `${'d'.repeat(60)}: ${'e'.repeat(20)}`, 'd'.repeat(60)],
    ['a comma right before the cut goes', `${'f'.repeat(60)}, ${'g'.repeat(20)}`, 'f'.repeat(60)],
    [
      'one long word (a URL): cut at 72',
      `see https://example.com/${'p'.repeat(80)}`,
      `see https://example.com/${'p'.repeat(48)}`,
    ],
    ['a multi-line task: its first line', 'first line\nsecond line\nthird', 'first line'],
    ['leading blank lines and spaces are skipped', '\n\n   fix it  \nmore', 'fix it'],
    ['a CRLF task: no carriage return in the subject', 'fix it\r\nmore detail', 'fix it'],
    ['emoji are never cut in half', `${'a'.repeat(70)}😀😀😀`, `${'a'.repeat(70)}😀😀`],
    ['an accent stays with its letter', `${'a'.repeat(71)}e\u0301e\u0301`, `${'a'.repeat(71)}e\u0301`],
    [
      'words of accented letters are cut between words',
      `${'é'.repeat(40)} ${'ü'.repeat(40)}`,
      'é'.repeat(40),
    ],
  ])('%s', (_name, task, expected) => {
    expect(subject(task)).toBe(expected);
    expect(subject(task)).not.toContain('…');
  });

  it.each([
    ['ascii words', 'word '.repeat(60)],
    ['ascii', 'x'.repeat(300)],
    ['emoji', '😀'.repeat(100)],
    ['family emoji (one grapheme of 7 code points)', '👨‍👩‍👧‍👦'.repeat(80)],
    ['mixed', `${'é'.repeat(50)}${'😀'.repeat(50)}`],
    ['CJK', '修'.repeat(90)],
  ])('the subject is at most 72 characters, well-formed and a prefix of the task: %s', (_name, task) => {
    const first = subject(task);
    expect(
      [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(first)].length,
    ).toBeLessThanOrEqual(72);
    expect(first.length).toBeGreaterThan(0);
    // A lone surrogate does not survive the way to git (UTF-8) unchanged.
    expect(Buffer.from(first, 'utf8').toString('utf8')).toBe(first);
    expect(task.startsWith(first)).toBe(true);
  });

  it('the body carries the full task, trimmed, with plain newlines', () => {
    const task = `  ${'long first line '.repeat(10)}\r\nstep 1: do this\nstep 2: "a; rm -rf ~"\n\n`;
    const message = commitMessage(NAME, task);
    const [first, blank, ...body] = message.split('\n');
    expect(first).toBe('long first line long first line long first line long first line long');
    expect(blank).toBe('');
    expect(body.join('\n')).toBe(
      `Merged from agentbox run ${NAME}.\n\nTask:\n${task.trim().replace('\r\n', '\n')}\n\nAgentbox-Run: ${NAME}\n`,
    );
    expect(message).not.toContain('\r');
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

  it('init (pid 1) and every process (-1) are never a run, whatever the start time (a planted state)', () => {
    // kill(-1, 0) succeeds, and kill(1, 0) for root: both looked alive before.
    expect(isAlive(1, processStartTime(1))).toBe(false);
    expect(isAlive(-1, null)).toBe(false);
  });
});

describe('merge: sensitive changes', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  /**
   * A repository with a fix run in REVIEW whose changes.patch is what `change` did in the run's
   * worktree. `executable` files are committed with mode 755 first.
   */
  async function fixRun(
    files: Record<string, string>,
    change: (at: (file: string) => string) => void,
    options: { executable?: string[]; hooksPath?: string } = {},
  ) {
    const repo = gitRepo({ files });
    for (const file of options.executable ?? []) fs.chmodSync(path.join(repo.dir, file), 0o755);
    const base = options.executable ? repo.commit('modes') : repo.git('rev-parse', 'HEAD').trim();
    if (options.hooksPath) repo.git('config', 'core.hooksPath', options.hooksPath);
    const dir = tempDir('agentbox-merge-');
    const wt = path.join(dir, 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'run', base });
    change((file) => {
      fs.mkdirSync(path.dirname(path.join(wt, file)), { recursive: true });
      return path.join(wt, file);
    });
    const { patch } = await exportPatch(wt, { base });
    ensureLedger(repo.dir);
    const ledger = openLedger(repo.dir);
    const run = await create(ledger, 'fix the login', '2026-01-02T03:04:00Z', {
      type: 'fix',
      ids: idSequence('0a1b2c'),
    });
    fs.writeFileSync(path.join(run.dir, 'changes.patch'), patch);
    await updateState(ledger, run, { status: 'REVIEW' });
    const status = () => readRun(ledger, run.name).state?.status;
    return { repo, name: run.name, wt, status };
  }

  function context(cwd: string, answers?: string[]) {
    const io = memoryIo(answers ? { answers } : {});
    const ctx: CommandContext = { cwd, env: {}, io };
    return { ctx, io };
  }

  /** Everything a merge could change: the files (ledger included), git's view, the index. */
  const everything = (repo: TestRepo) => {
    const status = repo.git('status', '--porcelain');
    const index = fs.readFileSync(path.join(repo.dir, '.git', 'index')).toString('base64');
    return { tree: snapshotTree(repo.dir), status, index, head: repo.git('rev-parse', 'HEAD') };
  };

  /** A run that edits CI and adds Claude Code settings: two sensitive changes, and one plain one. */
  const ciAndClaude = () =>
    fixRun({ '.github/workflows/ci.yml': 'on: push\n', 'src/a.ts': 'a\n' }, (at) => {
      fs.writeFileSync(at('.github/workflows/ci.yml'), 'on: [push, pull_request]\n');
      fs.writeFileSync(at('.claude/settings.json'), '{ "permissions": { "allow": ["Bash"] } }\n');
      fs.writeFileSync(at('src/a.ts'), 'b\n');
    });

  it('--yes refuses a patch with sensitive changes, names them and the next command, and changes nothing', async () => {
    const { repo, name, status } = await ciAndClaude();
    const before = everything(repo);
    const { ctx, io } = context(repo.dir);
    const error = await merge(ctx, name, { yes: true, commit: true }).catch((e) => e);
    expect(error).toBeInstanceOf(AgentboxError);
    expect(error).toMatchObject({
      code: 'MERGE_REFUSED',
      exitCode: 1,
      message: [
        `refusing to merge ${name} with --yes: it has 2 sensitive change(s)`,
        '  .claude/settings.json     agent-config  added',
        '  .github/workflows/ci.yml  ci            modified',
      ].join('\n'),
      hint: `nothing was changed. Review them (agentbox show ${name.slice(-6)}), then: agentbox merge ${name.slice(-6)} --yes --allow-sensitive`,
    });
    expect(io.stdout).toBe('');
    expect(everything(repo)).toEqual(before);
    expect(status()).toBe('REVIEW');
  });

  it('--yes --allow-sensitive applies them, and --json carries the list', async () => {
    const { repo, name, wt, status } = await ciAndClaude();
    const result = await cli(repo.dir, ['merge', name, '--yes', '--allow-sensitive', '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      run: name,
      status: 'MERGED',
      files: ['.claude/settings.json', '.github/workflows/ci.yml', 'src/a.ts'],
      commit: null,
      uncommitted: [],
      hooksRan: null,
      hooksNotRun: [],
      unfiltered: [],
      sensitive: [
        { path: '.claude/settings.json', kind: 'agent-config', detail: 'added' },
        { path: '.github/workflows/ci.yml', kind: 'ci', detail: 'modified' },
      ],
      refused: [],
      patch_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      claim: null,
    });
    expect(snapshotTree(repo.dir, { skip: ['.git', '.agents'] })).toEqual(snapshotTree(wt));
    expect(status()).toBe('MERGED');
  });

  it('the prompt lists the sensitive changes before it asks', async () => {
    const { repo, name, status } = await ciAndClaude();
    const before = everything(repo);
    const { ctx, io } = context(repo.dir, ['n']);
    expect(await merge(ctx, name, {})).toBe(1);
    expect(io.stdout.slice(io.stdout.indexOf('\n\nsensitive'))).toBe(
      [
        '',
        '',
        'sensitive changes (2): agent config, git files, CI, hooks, executables, symlinks',
        '  .claude/settings.json     agent-config  added',
        '  .github/workflows/ci.yml  ci            modified',
        '',
        `Apply these changes, the 2 sensitive one(s) included, to ${repo.dir} (branch main)? [y/N/d = show the diff] Nothing changed.`,
        '',
      ].join('\n'),
    );
    expect(everything(repo)).toEqual(before);
    expect(status()).toBe('REVIEW');
  });

  it('a symlink out of the repository is refused, even with --allow-sensitive', async () => {
    const { repo, name, status } = await fixRun({ 'src/a.ts': 'a\n' }, (at) => {
      fs.writeFileSync(at('src/a.ts'), 'b\n');
      fs.symlinkSync('../../outside', at('src/escape'));
    });
    const before = everything(repo);
    const { ctx, io } = context(repo.dir);
    const error = await merge(ctx, name, { yes: true, allowSensitive: true }).catch((e) => e);
    expect(error).toMatchObject({
      code: 'MERGE_REFUSED',
      message: `refusing to merge ${name}: agentbox never applies these changes\n  src/escape  symlink  new symlink → ../../outside: leaves ${repo.dir}`,
      hint: expect.stringMatching(
        new RegExp(
          `^nothing was changed\\. Ask the agent to take it out \\(agentbox revise ${name.slice(-6)} "…"\\), discard the run \\(agentbox discard ${name.slice(-6)}\\)`,
        ),
      ),
    });
    expect(io.stdout).toBe('');
    expect(everything(repo)).toEqual(before);
    expect(status()).toBe('REVIEW');
  });

  describe('--commit and hooks', () => {
    /** core.hooksPath=.githooks with the person's own pre-commit hook, which leaves a mark. */
    const withHook = (change: (at: (file: string) => string, marks: string) => void) => {
      const marks = tempDir('agentbox-marks-');
      const hook = `#!/bin/sh\necho own >> '${marks}/own'\n`;
      return fixRun({ '.githooks/pre-commit': hook, 'src/a.ts': 'a\n' }, (at) => change(at, marks), {
        executable: ['.githooks/pre-commit'],
        hooksPath: '.githooks',
      }).then((run) => ({ ...run, marks }));
    };

    it('a patch that changes a hook commits with no hook run, and says so (with no command that runs it)', async () => {
      const { repo, name, marks } = await withHook((at, marks) => {
        fs.writeFileSync(at('.githooks/pre-commit'), `#!/bin/sh\necho run >> '${marks}/run'\n`);
        fs.writeFileSync(at('src/a.ts'), 'b\n');
      });
      const { ctx, io } = context(repo.dir);
      expect(await merge(ctx, name, { yes: true, allowSensitive: true, commit: true })).toBe(0);
      const head = repo.git('rev-parse', 'HEAD').trim();
      expect(io.stdout.split('\n').slice(-6)).toEqual([
        `✓ merged 2 file(s) into ${repo.dir} (branch main) — commit ${head.slice(0, 12)}`,
        expect.stringMatching(/^ {2}patch sha256 [0-9a-f]{64}$/),
        '  your git hooks did not run for this commit: pre-commit (.githooks)',
        '  the patch changes hook files: .githooks/pre-commit; read them before a commit runs them',
        `  next: run your tests; then remove the run's worktree and branch: agentbox discard ${name.slice(-6)} (or agentbox gc)`,
        '',
      ]);
      expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe('.githooks/pre-commit\nsrc/a.ts\n');
      expect(fs.readdirSync(marks)).toEqual([]);
      // The merged hook is live: the next commit the person makes runs it (so the test can fail).
      repo.git('commit', '--allow-empty', '-q', '-m', 'later');
      expect(fs.readdirSync(marks)).toEqual(['run']);
    });

    it('a patch that leaves the hooks alone commits with none of the person’s hooks either (issue 37)', async () => {
      const { repo, name, marks } = await withHook((at) => {
        fs.writeFileSync(at('src/a.ts'), 'b\n');
      });
      const { ctx, io } = context(repo.dir);
      expect(await merge(ctx, name, { yes: true, commit: true, json: true })).toBe(0);
      expect(JSON.parse(io.stdout)).toMatchObject({
        files: ['src/a.ts'],
        hooksRan: false,
        hooksNotRun: ['pre-commit'],
        sensitive: [],
      });
      expect(fs.readdirSync(marks)).toEqual([]);
      expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe('src/a.ts\n');
    });
  });
});

describe('mergedNext', () => {
  it.each([
    [true, 'run your tests; then remove the run’s worktree'.replace('’', "'")],
    [false, 'run your tests; then commit the change (git add -p && git commit); then remove'],
  ])('committed: %s', (committed, start) => {
    expect(mergedNext(committed, 'abc123')).toMatch(new RegExp(`^${start.replace(/[()]/g, '\\$&')}`));
    expect(mergedNext(committed, 'abc123')).toContain('agentbox discard abc123 (or agentbox gc)');
  });
});
