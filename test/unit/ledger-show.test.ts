import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextStep, show } from '../../src/commands/show.js';
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
    expect(out.trimEnd().split('\n').at(-1)).toBe(`next: agentbox resume ${fix.name}`);
    // The task's escape character does not reach the terminal.
    expect(out).not.toContain('\u001b');
  });

  it('--json prints { name, dir, meta, state, files }', async () => {
    const { repo, scout } = await threeRuns();
    fs.writeFileSync(path.join(scout.dir, 'report.md'), '# r\n');
    const { ctx, io } = context(repo.dir);
    await show(ctx, 'last-done', { json: true });
    const out = JSON.parse(io.stdout);
    expect(Object.keys(out)).toEqual(['name', 'dir', 'meta', 'state', 'files']);
    expect(out).toMatchObject({
      name: scout.name,
      dir: scout.dir,
      meta: scout.meta,
      state: { status: 'DONE' },
    });
    expect(out.files).toEqual([{ path: 'report.md', bytes: 4 }]);
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
      /^agentbox: no run named "nope" in .*\/\.agents\/runs — run "agentbox status" to list runs\n$/,
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
    ['REVIEW', [], 'review the changes, then: agentbox merge R'],
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
    expect(nextStep('R', state, files)).toBe(expected);
  });
});
