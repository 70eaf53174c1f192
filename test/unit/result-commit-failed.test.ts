import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run as cli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { createRun, updateState } from '../../src/ledger/index.js';
import { commitResult } from '../../src/run/end/finalize-changes.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { ENVELOPE, ledgerRepo } from './fixtures/ledger.js';

/*
 * "The patch reviewed is the patch merged" (issue 37) when a run's result commit cannot be made
 * (its branch locked, a ref in the way): `diff` shows the result commit while it hashes
 * changes.patch, so a commit older than the patch must not stand as the run's result.
 */
describe('a result commit that cannot be made', () => {
  it('leaves the run with no result commit, so diff shows the patch merge applies, not the last commit', async () => {
    const { repo, ledger } = ledgerRepo();
    const base = repo.git('rev-parse', 'HEAD').trim();
    const handle = await createRun(ledger, {
      type: 'fix',
      task: 'bump x',
      envelope: ENVELOPE,
      repoShaStart: base,
      pid: process.pid,
    });
    const place = { ledger, meta: handle.meta, runDir: handle.dir, worktree: null };
    const patch = (text: string) => {
      repo.write('README.md', text);
      fs.writeFileSync(
        path.join(handle.dir, 'changes.patch'),
        repo.git('diff', '--binary', base, '--', 'README.md'),
      );
      repo.git('checkout', '--quiet', '--', 'README.md');
    };
    patch('first\n');
    const branch = `agentbox/${handle.name}`;
    await updateState(ledger, handle, { status: 'REVIEW', branch });
    const first = await commitResult(place, 'REVIEW', 'done');
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    await updateState(ledger, handle, { result_commit: first });

    // Revision 2's patch; a ref below the branch's name is in its way (git refuses the update).
    patch('second\n');
    repo.git('update-ref', '-d', `refs/heads/${branch}`);
    repo.git('update-ref', `refs/heads/${branch}/x`, base);
    const second = await commitResult(place, 'REVIEW', 'done again');
    expect(fs.readFileSync(path.join(handle.dir, 'events.jsonl'), 'utf8')).toContain('result_commit_failed');
    await updateState(ledger, handle, { result_commit: second });

    const io = memoryIo();
    expect(
      await cli(['diff', handle.meta.run_id, '--no-pager'], {
        cwd: repo.dir,
        env: { ...process.env, ...GIT_ENV },
        io,
      }),
    ).toBe(0);
    expect(io.stdout).toContain('+second');
    expect(second).toBeNull();
  });
});
