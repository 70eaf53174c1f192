import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/ledger/types.js';
import { nextStep } from '../../src/present/next-step.js';
import {
  errorLine,
  NO_TOOL_ERRORS,
  recordToolResult,
  toolErrorsNote,
} from '../../src/present/tool-errors.js';
import { setupDue, setupEnv, setupFailure, setupSandbox } from '../../src/run/begin/setup-step.js';
import { renderReport } from '../../src/run/end/report.js';
import { type CommandResult, runProjectCommand } from '../../src/sandbox/command.js';

const state = (setup?: RunState['setup']): RunState =>
  ({ status: 'ACTIVE', ...(setup === undefined ? {} : { setup }) }) as RunState;
const SETUP = { command: 'npm ci', timeoutMs: 60_000, domains: [] };
const record = (ok: boolean) => ({
  command: 'npm ci',
  ok,
  exit_code: ok ? 0 : 1,
  timed_out: false,
  duration_ms: 10,
  log: 'raw/setup.log',
});

describe('setupDue: once per worktree, before claude first starts there', () => {
  it.each([
    ['no runs.setup', null, '/wt', state(), false],
    ['a read-only run (no worktree)', SETUP, null, state(), false],
    ['a new fix run', SETUP, '/wt', state(), true],
    ['resumed after it passed', SETUP, '/wt', state(record(true)), false],
    ['it never finished (agentbox died during it)', SETUP, '/wt', state(record(false)), true],
  ] as const)('%s → %s', (_name, setup, worktree, s, due) => {
    expect(setupDue(setup, worktree, s)).toBe(due);
  });
});

describe('the setup is fenced like the agent', () => {
  const box = {
    gitDir: '/p/git',
    tmpDir: '/p/tmp',
    gitConfig: '/p/gitconfig',
    listed: [],
    sockDir: '/p/s',
    mainGitDir: '/repo/.git',
    mainTree: '/repo',
    denyRead: ['/home/u', '/repo', '/home/u/.ssh'],
    allowRead: ['/home/u/.npm'],
    runtimeWritable: [],
    allowedDomains: ['example.com'],
  };
  it('writes only its worktree, private git and temp dir, reads the main tree too; the network is the run’s plus runs.setup_domains', () => {
    const wt = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-box-'));
    fs.mkdirSync(path.join(wt, '.claude', 'commands'), { recursive: true });
    try {
      expect(setupSandbox(box, wt, '/repo/.agents', ['registry.npmjs.org', 'example.com'])).toEqual({
        writable: [wt, '/p/git', '/p/tmp', '/p/s'],
        // Only what exists is listed (a missing denied path becomes a mount point).
        denyWrite: ['/repo/.git', path.join(wt, '.claude/commands')],
        // The main tree the agent cannot read is opened to the setup (it copies from it).
        denyRead: ['/repo/.agents', '/home/u', '/home/u/.ssh'],
        allowRead: ['/home/u/.npm', '/repo'],
        allowedDomains: ['example.com', 'registry.npmjs.org'],
        tmpDir: '/p/s',
      });
    } finally {
      fs.rmSync(wt, { recursive: true, force: true });
    }
  });

  it('its caches go to the run’s temp dir in the sandbox (home is read-only there); it knows the main tree', () => {
    expect(setupEnv({ HOME: '/home/u', PATH: '/bin' }, '/repo', box)).toEqual({
      HOME: '/home/u',
      PATH: '/bin',
      AGENTBOX_REPO_ROOT: '/repo',
      npm_config_cache: '/p/tmp/npm-cache',
      XDG_CACHE_HOME: '/p/tmp/cache',
    });
    expect(setupEnv({ HOME: '/home/u' }, '/repo', null)).toEqual({
      HOME: '/home/u',
      AGENTBOX_REPO_ROOT: '/repo',
    });
  });
});

describe('setupFailure names the command, how it ended, the log and that claude did not start', () => {
  const result = (over: Partial<CommandResult>): CommandResult => ({
    ok: false,
    command: 'npm ci',
    exitCode: 1,
    timedOut: false,
    stopped: false,
    durationMs: 61_000,
    excerpt: '',
    logFile: '/x',
    ...over,
  });
  it.each([
    [
      result({ exitCode: 3 }),
      null,
      'runs.setup "npm ci" failed with exit code 3; its output is in L; claude was not started',
    ],
    [
      result({ exitCode: null, timedOut: true }),
      null,
      'runs.setup "npm ci" timed out after 61s (runs.setup_timeout); its output is in L; claude was not started',
    ],
    [
      result({ exitCode: null, stopped: true }),
      'Ctrl-C',
      'runs.setup "npm ci" was stopped by Ctrl-C; its output is in L; claude was not started',
    ],
    [
      result({ exitCode: null, excerpt: 'could not start: ENOENT\nmore' }),
      null,
      'runs.setup "npm ci" could not start (could not start: ENOENT); its output is in L; claude was not started',
    ],
  ])('%#', (r, by, message) => {
    expect(setupFailure(r, 'L', by)).toEqual({ kind: 'setup', message });
  });

  it('the next step: fix the command and start again (there is no session to resume)', () => {
    expect(nextStep('FAILED', 'abc123', 'setup')).toBe(
      'fix runs.setup in agentbox.yaml (try the command in your own tree first), then start the run again',
    );
    expect(nextStep('ABORTED', 'abc123', 'setup')).toBe('start the run again');
  });
});

describe('failed tool calls', () => {
  it.each([
    [
      'node’s missing module',
      "Exit code 1\nnode:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'tape'\nRequire stack:\n- /wt/test.js",
      "Error: Cannot find module 'tape'",
    ],
    [
      'ls',
      "Exit code 2\nls: cannot access '/x': No such file or directory",
      "ls: cannot access '/x': No such file or directory",
    ],
    ['a tool error', '<tool_use_error>File does not exist.</tool_use_error>', 'File does not exist.'],
    ['nothing telling: the first line', 'Exit code 1\nsomething odd\nmore', 'something odd'],
    ['no output at all', 'Exit code 1', 'Exit code 1'],
    ['empty', '', '(no output)'],
    ['a long line is cut', `error: ${'x'.repeat(300)}`, `error: ${'x'.repeat(112)}…`],
  ])('errorLine: %s', (_name, output, line) => {
    expect(errorLine(output)).toBe(line);
  });

  it('counts errors, not refusals or successes, and keeps the last in one line', () => {
    const call = { name: 'Bash', input: { command: 'npm test' } };
    let e = recordToolResult(NO_TOOL_ERRORS, call, { isError: false, text: 'ok' });
    expect(e).toBe(NO_TOOL_ERRORS);
    e = recordToolResult(e, call, { isError: true, refusedBy: 'sandbox', text: 'Read-only file system' });
    expect(e).toBe(NO_TOOL_ERRORS);
    e = recordToolResult(e, call, { isError: true, text: "Exit code 1\nError: Cannot find module 'tape'" });
    e = recordToolResult(
      e,
      { name: 'Read', input: { file_path: '/wt/x' } },
      { isError: true, text: 'File does not exist.' },
    );
    expect(e).toEqual({ count: 2, last: 'Read /wt/x: File does not exist.' });
    expect(recordToolResult(NO_TOOL_ERRORS, undefined, { isError: true, text: 'boom' })).toEqual({
      count: 1,
      last: 'a tool: boom',
    });
  });

  it.each([
    [NO_TOOL_ERRORS, null],
    [undefined, null],
    [{ count: 1, last: 'Bash x: e' }, '1 tool call failed (last: Bash x: e)'],
    [{ count: 3, last: 'Bash x: e' }, '3 tool calls failed (last: Bash x: e)'],
  ])('toolErrorsNote %#', (errors, note) => {
    expect(toolErrorsNote(errors)).toBe(note);
  });

  it('report.md says how many failed and the last, in a code span a backtick cannot end', () => {
    const report = renderReport({
      meta: { run_name: 'r', run_id: 'abc123', type: 'fix', task: 't' } as never,
      outcome: { status: 'REVIEW', failure: null },
      result: 'done',
      toolCalls: 5,
      toolErrors: { count: 2, last: 'Bash echo `x`: Error: no' },
      durationMs: 1000,
      changes: [],
      stat: '',
      denials: [],
    });
    expect(report).toContain("- **failed tool calls: 2** — last: `Bash echo 'x': Error: no`\n");
    const clean = renderReport({
      meta: { run_name: 'r', run_id: 'abc123', type: 'fix', task: 't' } as never,
      outcome: { status: 'REVIEW', failure: null },
      result: 'done',
      toolCalls: 5,
      toolErrors: NO_TOOL_ERRORS,
      durationMs: 1000,
      changes: [],
      stat: '',
      denials: [],
    });
    expect(clean).not.toContain('failed tool calls');
  });
});

describe('runProjectCommand (without a sandbox: real processes)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'project-command-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (command: string, over: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    runProjectCommand({
      command,
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      sandbox: null,
      settingsFile: path.join(dir, 'unused.json'),
      logFile: path.join(dir, 'raw', 'cmd.log'),
      timeoutMs: over.timeoutMs ?? 10_000,
      ...(over.signal ? { signal: over.signal } : {}),
    });

  it('passes with exit 0; its output (both streams) is in the log', async () => {
    const r = await run('echo out; echo err >&2');
    expect(r).toMatchObject({ ok: true, exitCode: 0, timedOut: false, stopped: false });
    expect(fs.readFileSync(r.logFile, 'utf8')).toBe('out\nerr\n');
    expect(r.excerpt).toBe('out\nerr');
  });

  it('fails with its exit code; the excerpt is the end of a long output, the log has it all', async () => {
    const r = await run('seq 1 5000; exit 3');
    expect(r).toMatchObject({ ok: false, exitCode: 3 });
    expect(fs.readFileSync(r.logFile, 'utf8').split('\n')).toHaveLength(5001);
    expect(r.excerpt.endsWith('5000')).toBe(true);
    expect(r.excerpt.length).toBeLessThanOrEqual(3000);
  });

  it('a timeout ends it and everything it started', async () => {
    const t = Date.now();
    const r = await run('echo started; sleep 30 & sleep 30', { timeoutMs: 1000 });
    expect(Date.now() - t).toBeLessThan(5000);
    expect(r).toMatchObject({ ok: false, exitCode: null, timedOut: true });
    expect(r.excerpt).toBe('timed out after 1 s\nstarted');
  });

  it('an abort stops it', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const r = await run('sleep 30', { signal: abort.signal });
    expect(r).toMatchObject({ ok: false, exitCode: null, stopped: true, timedOut: false });
  });
});
