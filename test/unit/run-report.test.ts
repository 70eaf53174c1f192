import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { EMPTY_SUMMARY } from '../../src/claude/stream.js';
import { memoryIo } from '../../src/context.js';
import type { PatchFile } from '../../src/git/patch.js';
import { addWorktree } from '../../src/git/worktree.js';
import { createRun, ensureLedger, openLedger } from '../../src/ledger/index.js';
import { buildMeta } from '../../src/ledger/meta.js';
import { RUN_STATUSES, type RunMeta, type RunStatus, type RunType } from '../../src/ledger/types.js';
import { toolLine, toolTarget } from '../../src/present/live.js';
import { nextStep } from '../../src/present/next-step.js';
import { liveLine, printSummary, succeeded } from '../../src/present/print.js';
import { buildEnvelope } from '../../src/run/begin/tier.js';
import { type Finalized, finalizeRun } from '../../src/run/end/finalize.js';
import type { Outcome } from '../../src/run/end/outcome.js';
import { type ReportInput, renderReport } from '../../src/run/end/report.js';
import type { Progress } from '../../src/run/execute.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from './fixtures/ledger.js';

const ID = '0a1b2c';
const NAME = `26-01-02_0304__fix-the-login__${ID}`;
const ROOT = '/repo';
const RUN_DIR = `${ROOT}/.agents/runs/${NAME}`;

const meta = (type: RunType, task = 'fix the login'): RunMeta =>
  buildMeta({
    name: NAME,
    id: ID,
    slug: 'fix-the-login',
    type,
    task,
    envelope: buildEnvelope({
      type,
      runId: ID,
      model: null,
      worktree: type === 'fix' ? `${ROOT}/.agents/worktrees/${NAME}` : null,
      fixAllowed: ['Bash'],
    }),
    repoRoot: ROOT,
    repoShaStart: '1d13b648d980d8c88d5317ac3e8177c0f8e53455',
    now: new Date('2026-01-02T03:04:05Z'),
  });

const DONE: Outcome = { status: 'DONE', failure: null };
const CHANGES: PatchFile[] = [
  { path: 'src/login.ts', status: 'modified', binary: false },
  { path: 'test/login.test.ts', status: 'added', binary: false },
];
const STAT =
  ' src/login.ts        | 4 ++--\n test/login.test.ts  | 9 +++++++++\n 2 files changed, 11 insertions(+), 2 deletions(-)\n';

const report = (over: Partial<ReportInput> = {}): string =>
  renderReport({
    meta: meta('scout'),
    outcome: DONE,
    result: 'The login is slow because of bcrypt cost 14.',
    toolCalls: 3,
    durationMs: 12_000,
    changes: [],
    stat: '',
    denials: [],
    ...over,
  });

describe('renderReport', () => {
  it('a scout run that finished: facts, then the result', () => {
    expect(report({ costUsd: 0.01234 })).toBe(
      [
        '# scout: fix the login',
        '',
        `- run: \`${NAME}\` (scout)`,
        '- status: **DONE**',
        '- duration: 12s · tool calls: 3 · cost: $0.0123',
        '',
        '## Result',
        '',
        'The login is slow because of bcrypt cost 14.',
        '',
      ].join('\n'),
    );
  });

  it('a crashed run names the failure and has no cost line when there is no cost', () => {
    const text = report({
      outcome: { status: 'CRASHED', failure: { kind: 'timeout', message: 'still running after 1800s' } },
      result: null,
      durationMs: 1_800_000,
    });
    expect(text).toContain('- status: **CRASHED** — timeout: still running after 1800s\n');
    expect(text).toContain('- duration: 30m · tool calls: 3\n');
    expect(text).not.toContain('cost');
    expect(text).not.toContain('## Result');
  });

  it('a plan run points at plan.md instead of repeating it', () => {
    const text = report({ meta: meta('plan'), result: '1. do it', resultFile: 'plan.md' });
    expect(text).toContain('The plan is in [plan.md](plan.md).');
    expect(text).not.toContain('## Result');
    expect(text).not.toContain('1. do it');
  });

  it('a fix run with changes: count, patch, merge command and the stat', () => {
    const text = report({
      meta: meta('fix'),
      outcome: { status: 'REVIEW', failure: null },
      changes: CHANGES,
      stat: STAT,
    });
    expect(text).toContain(
      [
        '## Changes',
        '',
        `2 file(s) changed; the patch is \`changes.patch\`. Review it with \`agentbox diff ${ID}\`, apply it with \`agentbox merge ${ID}\`.`,
        '',
        '```text',
        STAT.trimEnd(),
        '```',
      ].join('\n'),
    );
  });

  it('a fix run with sensitive changes: a section after Changes, refused ones first', () => {
    const text = report({
      meta: meta('fix'),
      outcome: { status: 'REVIEW', failure: null },
      changes: CHANGES,
      stat: STAT,
      inspection: {
        sensitive: [
          { path: '.github/workflows/ci.yml', kind: 'ci', detail: 'modified' },
          { path: 'odd`name\n.sh', kind: 'executable', detail: 'new file, mode 100755' },
        ],
        refused: [{ path: 'l', kind: 'symlink', detail: 'new symlink → /etc/passwd: an absolute target' }],
      },
    });
    expect(text).toContain(
      [
        '```',
        '',
        '## Sensitive changes',
        '',
        '`agentbox merge` refuses this patch: 1 change(s) it never applies.',
        '',
        '- **refused** `l` — symlink: new symlink → /etc/passwd: an absolute target',
        '',
        '2 change(s) to review before merging: `agentbox merge` lists them and asks; with `--yes` it needs `--allow-sensitive`.',
        '',
        '- `.github/workflows/ci.yml` — ci: modified',
        '- `` odd`name .sh `` — executable: new file, mode 100755',
        '',
      ].join('\n'),
    );
  });

  it('no Sensitive changes section without any, or when the patch could not be inspected', () => {
    const fix = { meta: meta('fix'), changes: CHANGES, stat: STAT };
    expect(report({ ...fix, inspection: { sensitive: [], refused: [] } })).not.toContain('## Sensitive');
    expect(report(fix)).not.toContain('## Sensitive');
  });

  it('finalizeRun inspects the exported patch against the main tree and reports it', async () => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    const repo = gitRepo({ files: { 'src/a.ts': 'a\n' } });
    const dir = tempDir('agentbox-finalize-');
    try {
      repo.git('config', 'core.hooksPath', 'scripts/hooks');
      ensureLedger(repo.dir);
      const ledger = openLedger(repo.dir);
      const base = repo.git('rev-parse', 'HEAD').trim();
      const run = await createRun(ledger, {
        type: 'fix',
        task: 'fix it',
        envelope: ENVELOPE,
        repoShaStart: base,
      });
      const wt = path.join(dir, 'wt');
      await addWorktree(repo.dir, { path: wt, branch: 'run', base });
      fs.mkdirSync(path.join(wt, 'scripts/hooks'), { recursive: true });
      fs.writeFileSync(path.join(wt, 'scripts/hooks/pre-commit'), 'echo\n');
      fs.writeFileSync(path.join(wt, 'src/a.ts'), 'b\n');
      await finalizeRun({
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
      const text = fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8');
      expect(text).toContain('## Sensitive changes\n');
      expect(text).toContain('\n- `scripts/hooks/pre-commit` — hooks: added\n');
      expect(text).not.toContain('src/a.ts` —');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a fix run without changes says so; a scout run has no Changes section', () => {
    expect(report({ meta: meta('fix') })).toContain('## Changes\n\nNo files changed.\n');
    expect(report()).not.toContain('## Changes');
  });

  it('lists refused actions', () => {
    const text = report({
      denials: [
        { tool: 'Edit', rule: 'airlock', reason: 'outside the worktree' },
        { tool: 'Bash', rule: 'permission-rule', reason: 'git push is denied' },
      ],
    });
    expect(text).toContain(
      '## Refused actions\n\n- Edit (airlock): outside the worktree\n- Bash (permission-rule): git push is denied\n',
    );
  });

  it.each<[string, string, string]>([
    [
      'a multi-line task on one line',
      'fix the login\n\n  and the   logout\r\n',
      '# scout: fix the login and the logout',
    ],
    ['a long task cut at 100 characters', 'y'.repeat(150), `# scout: ${'y'.repeat(100)}…`],
  ])('title: %s', (_name, task, title) => {
    expect(report({ meta: meta('scout', task) }).split('\n')[0]).toBe(title);
  });

  it('trims the result and ends with exactly one newline', () => {
    const text = report({ result: '\n\n  the answer  \n\n\n' });
    expect(text.endsWith('## Result\n\nthe answer\n')).toBe(true);
  });
});

describe('liveLine: what is happening, and for how long, even between stream lines', () => {
  const progress = (over: Partial<Progress> = {}): Progress => ({
    tool: null,
    toolCalls: 0,
    elapsedMs: 0,
    ...over,
  });
  const T = 1_000_000;
  it.each<[string, Progress, number, number, string]>([
    ['at the start', progress(), 0, T, '⠋ waiting for the model · 0 tool calls · 0ms'],
    [
      'a command under way, with its target and its own clock',
      progress({ tool: 'Bash', target: 'npm test', toolSince: T - 12_000, toolCalls: 3, elapsedMs: 40_000 }),
      1,
      T,
      '⠙ Bash npm test · 12s · 3 tool calls · 40s',
    ],
    [
      'the clock goes on between stream lines (a tick 8 s after the last one)',
      progress({ toolCalls: 1, elapsedMs: 4_000 }),
      2,
      T + 8_000,
      '⠹ waiting for the model · 12s · 1 tool call · 12s',
    ],
    [
      'many tool calls',
      progress({ tool: 'Edit', target: 'src/x.ts', toolSince: T, toolCalls: 12, elapsedMs: 125_000 }),
      9,
      T,
      '⠏ Edit src/x.ts · 0ms · 12 tool calls · 2m 5s',
    ],
    ['the spinner wraps around', progress(), 10, T, '⠋ waiting for the model · 0 tool calls · 0ms'],
  ])('%s', (_name, p, frame, now, expected) => {
    expect(liveLine(p, frame, now, T)).toBe(expected);
  });

  it.each([
    [{ command: 'npm  test\n--watch' }, 'npm test --watch'],
    [{ file_path: '/repo/src/x.ts', content: 'x' }, '/repo/src/x.ts'],
    [{ pattern: 'TODO' }, 'TODO'],
    [{ command: 'x'.repeat(100) }, `${'x'.repeat(59)}…`],
    [
      { file_path: `/home/me/.local/share/agentbox/worktrees/repo-1/${'d'.repeat(60)}/src/x.ts` },
      `…${'d'.repeat(50)}/src/x.ts`,
    ],
    [{}, null],
    ['not an object', null],
  ])('toolTarget(%j) → %s', (input, expected) => {
    expect(toolTarget(input)).toBe(expected);
  });

  it('piped output gets a plain line per tool call', () => {
    expect(toolLine(progress({ tool: 'Bash', target: 'npm test', toolCalls: 2, elapsedMs: 61_000 }))).toBe(
      '[1m 1s] Bash npm test',
    );
  });
});

describe('nextStep and succeeded', () => {
  const expected: Record<RunStatus, [string, boolean]> = {
    ACTIVE: [`agentbox show ${NAME}`, false],
    DONE: [`agentbox show ${NAME}`, true],
    REVIEW: [`agentbox diff ${NAME}, then agentbox merge ${NAME}`, true],
    CRASHED: [`agentbox resume ${NAME}`, false],
    STALLED: [`agentbox resume ${NAME}`, false],
    ABORTED: [`agentbox resume ${NAME}`, false],
    FAILED: [`agentbox show ${NAME}`, false],
    MERGED: [`agentbox show ${NAME}`, false],
    DISCARDED: [`agentbox show ${NAME}`, false],
  };
  it.each([
    ['api_error', /agentbox doctor; claude auth login or ANTHROPIC_API_KEY\), then agentbox resume/],
    ['violation', /^agentbox show .*patch and report are kept/],
    ['agent_abort', /^agentbox show /],
    ['io_error', /^free disk space or make \.agents writable, then agentbox resume/],
    ['timeout', /^agentbox resume /],
    ['budget', /^agentbox resume /],
  ] as const)('ABORTED with %s → %s', (kind, next) => {
    expect(nextStep('ABORTED', NAME, kind)).toMatch(next);
  });

  it.each(RUN_STATUSES.map((status) => [status, ...expected[status]] as const))(
    '%s → %s, succeeded: %s',
    (status, next, ok) => {
      expect(nextStep(status, NAME)).toBe(next);
      expect(succeeded(status)).toBe(ok);
    },
  );
});

describe('printSummary', () => {
  const finalized = (over: Partial<Finalized> = {}): Finalized => ({
    name: NAME,
    status: 'DONE',
    failure: null,
    files: ['report.md'],
    changes: null,
    result: 'the answer',
    toolCalls: 3,
    denials: [],
    durationMs: 12_000,
    resultCommit: null,
    ...over,
  });
  const text = (done: Finalized) => {
    const io = memoryIo();
    printSummary(io, RUN_DIR, ROOT, done, false);
    expect(io.stderr).toBe('');
    return io.stdout;
  };
  const json = (done: Finalized) => {
    const io = memoryIo();
    printSummary(io, RUN_DIR, ROOT, done, true);
    expect(io.stdout.endsWith('}\n')).toBe(true);
    return JSON.parse(io.stdout);
  };
  const rel = `.agents/runs/${NAME}`;

  it('text: a run that succeeded', () => {
    expect(text(finalized())).toBe(
      [
        `✓ ${NAME} — DONE`,
        '  12s · 3 tool calls',
        '',
        'the answer',
        '',
        `  report.md     ${rel}/report.md`,
        `  next          agentbox show ${ID}`,
        '',
      ].join('\n'),
    );
  });

  it('text: a fix with changes and refusals', () => {
    const out = text(
      finalized({
        status: 'REVIEW',
        files: ['changes.patch', 'report.md'],
        changes: { patch: Buffer.from('diff --git …'), files: CHANGES, stat: STAT },
        denials: [{ tool: 'Edit', rule: 'airlock', reason: 'outside' }],
      }),
    );
    expect(out).toBe(
      [
        `✓ ${NAME} — REVIEW`,
        '  12s · 3 tool calls · 1 refused',
        '  2 file(s) changed → changes.patch',
        '     src/login.ts        | 4 ++--',
        '     test/login.test.ts  | 9 +++++++++',
        '     2 files changed, 11 insertions(+), 2 deletions(-)',
        `  changes.patch ${rel}/changes.patch`,
        `  report.md     ${rel}/report.md`,
        `  next          agentbox diff ${ID}, then agentbox merge ${ID}`,
        '',
      ].join('\n'),
    );
  });

  it('text: a failed run names the failure and the resume command', () => {
    const out = text(
      finalized({
        status: 'CRASHED',
        failure: { kind: 'api_error', message: 'the model API failed (HTTP 529): x' },
      }),
    );
    expect(out.split('\n')[0]).toBe(`✗ ${NAME} — CRASHED (api_error): the model API failed (HTTP 529): x`);
    expect(out).toContain(
      `next          check that Claude Code can reach the model (agentbox doctor; claude auth login or ANTHROPIC_API_KEY), then agentbox resume ${ID}\n`,
    );
  });

  it('text: a run with failed tool calls gets a warning mark and says so on its first line', () => {
    const out = text(
      finalized({ toolErrors: { count: 3, last: "Bash npm test: Error: Cannot find module 'tape'" } }),
    );
    expect(out.split('\n')[0]).toBe(
      `⚠ ${NAME} — DONE · 3 tool calls failed (last: Bash npm test: Error: Cannot find module 'tape')`,
    );
    expect(text(finalized({ toolErrors: { count: 0, last: null } })).split('\n')[0]).toBe(`✓ ${NAME} — DONE`);
    // A run that failed keeps its ✗, and still says it.
    const failed = text(
      finalized({
        status: 'CRASHED',
        failure: { kind: 'crashed', message: 'x' },
        toolErrors: { count: 1, last: 'Bash y: z' },
      }),
    );
    expect(failed.split('\n')[0]).toBe(
      `✗ ${NAME} — CRASHED (crashed): x · 1 tool call failed (last: Bash y: z)`,
    );
  });

  it('text: a long answer shows its first screen and where the rest is', () => {
    const answer = Array.from({ length: 45 }, (_, i) => `line ${i + 1}`).join('\n');
    const out = text(finalized({ result: answer, files: ['plan.md', 'report.md'] }));
    expect(out).toContain('line 30\n… 15 more line(s) in plan.md\n');
    expect(out).not.toContain('line 31');
  });

  it('json: every field', () => {
    expect(
      json(
        finalized({
          status: 'REVIEW',
          files: ['changes.patch', 'report.md'],
          changes: {
            patch: Buffer.from('x'),
            files: CHANGES,
            stat: STAT,
            leftOut: [{ path: 'core', bytes: 60 * 2 ** 20, why: 'file' }],
          },
          denials: [{ tool: 'Edit', rule: 'airlock', reason: 'outside' }],
          toolErrors: { count: 2, last: 'Bash npm test: Error: no' },
          nested: [{ path: 'vendor/lib', kind: 'folder', moved_to: 'raw/nested-git/1.git' }],
        }),
      ),
    ).toEqual({
      run: NAME,
      status: 'REVIEW',
      failure: null,
      dir: RUN_DIR,
      files: ['changes.patch', 'report.md'],
      changes: CHANGES,
      tool_calls: 3,
      failed_tool_calls: 2,
      last_tool_error: 'Bash npm test: Error: no',
      denials: [{ tool: 'Edit', rule: 'airlock', reason: 'outside' }],
      duration_ms: 12_000,
      answer: 'the answer',
      commit: null,
      nested: [{ path: 'vendor/lib', kind: 'folder', moved_to: 'raw/nested-git/1.git' }],
      left_out: { files: [{ path: 'core', bytes: 60 * 2 ** 20, why: 'file' }], more: 0 },
      next: `agentbox diff ${ID}, then agentbox merge ${ID}`,
    });
  });

  it('json: a failed run without changes', () => {
    const out = json(
      finalized({ status: 'ABORTED', failure: { kind: 'killed', message: 'stopped by SIGINT' } }),
    );
    expect(out.failure).toEqual({ kind: 'killed', message: 'stopped by SIGINT' });
    expect(out.changes).toEqual([]);
    expect(out.next).toBe(`agentbox resume ${ID}`);
  });
});
