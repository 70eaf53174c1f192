import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { merge } from '../../src/commands/merge.js';
import { type CommandContext, memoryIo } from '../../src/context.js';
import { numstatPaths } from '../../src/git/uninspected.js';
import { openLedger, readRun } from '../../src/ledger/index.js';
import { reviewRun } from './fixtures/review-run.js';

/*
 * `git apply` also applies a bare `---`/`+++` section, which no `diff --git` header names; the
 * gate's inspection read only `diff --git` sections, so a publisher that appended one to a run's
 * patch landed a CI workflow with no `--allow-sensitive`, left out of the commit (found by a user's
 * eye). Now git's own list of the patch's paths is set against the inspected one, and a path only
 * git sees is refused: what was not inspected is not applied.
 */

const BARE = [
  '--- /dev/null',
  '+++ b/.github/workflows/evil.yml',
  '@@ -0,0 +1,2 @@',
  '+on: push',
  '+jobs: {}',
  '',
].join('\n');

describe('merge refuses what inspection did not see', () => {
  it.each([
    ['appended after the sections', (patch: string) => `${patch}${BARE}`],
    ['before them', (patch: string) => `${BARE}${patch}`],
    ['changing a tracked file', (patch: string) => `${patch}--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+c\n`],
  ])('a bare section %s: refused, nothing applied, the run still in REVIEW', async (_what, edit) => {
    const r = await reviewRun({
      files: { 'a.txt': 'a\n' },
      agent: { 'new.txt': 'new\n' },
      task: 'add new.txt',
    });
    const file = path.join(r.dir, 'changes.patch');
    fs.writeFileSync(file, edit(fs.readFileSync(file, 'utf8')));
    const before = r.repo.git('status', '--porcelain', '--untracked-files=all');
    const io = memoryIo();
    const ctx = { cwd: r.repo.dir, env: {}, io } as CommandContext;
    const error = await merge(ctx, r.id, { yes: true, force: true, allowSensitive: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ message: expect.stringMatching(/agentbox never applies these changes/) });
    expect((error as Error).message).toMatch(/uninspected +a change outside any `diff --git` section/);
    expect(r.repo.git('status', '--porcelain', '--untracked-files=all')).toBe(before);
    expect(fs.existsSync(path.join(r.repo.dir, '.github'))).toBe(false);
    expect(readRun(openLedger(r.repo.dir), r.name).state?.status).toBe('REVIEW');
  });

  it('an ordinary git patch has nothing uninspected: it merges', async () => {
    const r = await reviewRun({
      files: { 'a.txt': 'a\n', 'old name.txt': 'x\n' },
      agent: { 'new.txt': 'new\n', 'a.txt': 'b\n' },
      task: 'change a.txt',
    });
    const ctx = { cwd: r.repo.dir, env: {}, io: memoryIo() } as CommandContext;
    expect(await merge(ctx, r.id, { yes: true })).toBe(0);
    expect(fs.readFileSync(path.join(r.repo.dir, 'new.txt'), 'utf8')).toBe('new\n');
  });

  it("reads git's --numstat -z records, renames' two names included", () => {
    expect(numstatPaths('1\t0\ta.txt\0-\t-\tbin.png\0')).toEqual(['a.txt', 'bin.png']);
    expect(numstatPaths('0\t0\t\0old name\0new\tname\0' + '2\t1\tx\0')).toEqual([
      'old name',
      'new\tname',
      'x',
    ]);
    expect(numstatPaths('')).toEqual([]);
  });
});
