import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ledger, RunMeta } from '../../src/ledger/index.js';
import { exportChanges } from '../../src/run/end/finalize-changes.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

/**
 * A revision that undoes the whole change leaves no patch behind: the revision before's
 * changes.patch would otherwise be merged as the run's change. Outside a revision the earlier patch
 * stays (after a crash, a replay may start from an empty worktree: that patch is what is kept).
 */
describe('exportChanges when the change is now empty', () => {
  it.each([
    ['in a revision: the stale patch is removed', { number: 2 }, true],
    ['outside a revision: the earlier patch stays', null, false],
  ])('%s', async (_what, revision, removed) => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    const runDir = tempDir('agentbox-run-');
    fs.writeFileSync(path.join(runDir, 'changes.patch'), 'the revision before\n');
    fs.writeFileSync(
      path.join(runDir, 'state.json'),
      JSON.stringify({
        schema_version: 1,
        status: 'ACTIVE',
        pid: null,
        pid_start: null,
        claude_pid: null,
        claude_pid_start: null,
        session_id: null,
        worktree_path: repo.dir,
        branch: null,
        started_at: '2026-01-01T00:00:00.000Z',
        ended_at: null,
        last_heartbeat: null,
        config_hash: 'x',
        failure: null,
        tool_calls: 0,
        updated_at: '2026-01-01T00:00:00.000Z',
        revision: revision && {
          ...revision,
          started_at: '2026-01-01T00:00:00.000Z',
          from_commit: null,
          cost_before_usd: 0,
        },
      }),
    );
    const out = await exportChanges({
      ledger: { root: repo.dir } as Ledger,
      meta: { type: 'fix', run_id: 'abc123', repo_sha_start: base } as RunMeta,
      runDir,
      worktree: repo.dir,
    });
    expect(out.files).toEqual([]);
    expect(out.emptied).toBe(removed);
    expect(fs.existsSync(path.join(runDir, 'changes.patch'))).toBe(!removed);
  });
});
