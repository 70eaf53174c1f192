import { describe, expect, it } from 'vitest';
import { updateGroupState } from '../../src/group/store.js';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { gitRepo } from '../helpers/git-repo.js';
import { makeGroup } from './fixtures/group.js';
import { cli } from './fixtures/ledger.js';

const change = (to: string) =>
  `diff --git a/f.txt b/f.txt\nindex 0000000..1111111 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n ctx\n-old\n+${to}\n`;

/** A repo whose f.txt each attempt changes its own way: 1 passes, 2 fails verify, 3 changes nothing, 4 waits. */
async function groupWithChanges() {
  const repo = gitRepo({ files: { 'f.txt': 'ctx\nold\n' } });
  ensureLedger(repo.dir);
  const ledger = openLedger(repo.dir);
  const sha = repo.git('rev-parse', 'HEAD').trim();
  const made = await makeGroup(
    ledger,
    [
      { status: 'REVIEW', verified: true, patch: change('new A') },
      { status: 'REVIEW', verified: false, patch: change('new B') },
      { status: 'DONE', verified: true },
      { status: null },
    ],
    { sha },
  );
  return { repo, ledger, sha, ...made, id: made.group.meta.group_id };
}

describe('agentbox diff <group>', () => {
  it('without --attempt: the best-ranked attempt’s change, saying which (stderr when a patch is piped)', async () => {
    const { repo, id, runs } = await groupWithChanges();
    const r = await cli(repo.dir, ['diff', id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^diff --git a\/f\.txt b\/f\.txt\n/);
    expect(r.stdout).toContain('-old\n+new A\n');
    expect(r.stderr).toBe(
      `attempt 1 of 4 in group ${id} (run ${runs[0]!.id}), ranked first — agentbox show ${id} says why\n`,
    );
    const stat = await cli(repo.dir, ['diff', id, '--stat']);
    expect(stat.stdout).toMatch(/f\.txt \| 2 \+-\n.*\nattempt 1 of 4 in group .*ranked first.*\n$/);
  });

  it('once merged: the change that was merged, not the first-ranked one (it showed a discarded attempt)', async () => {
    const { repo, ledger, id, group, runs } = await groupWithChanges();
    await updateGroupState(ledger, group.name, () => ({
      status: 'MERGED',
      merged: { attempt: 2, run: runs[1]!.name, at: '2026-01-01T00:00:00Z' },
    }));
    const r = await cli(repo.dir, ['diff', id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('-old\n+new B\n');
    expect(r.stderr).toBe(`attempt 2 of 4 in group ${id} (run ${runs[1]!.id}), the one merged\n`);
  });

  it('--attempt k: that attempt’s change, as diff <run> shows it; --json names the group and attempt', async () => {
    const { repo, id, group, runs } = await groupWithChanges();
    const r = await cli(repo.dir, ['diff', id, '--attempt', '2']);
    expect(r.stdout).toContain('-old\n+new B\n');
    expect(r.stderr).toBe(`attempt 2 of 4 in group ${id} (run ${runs[1]!.id})\n`);
    const asRun = await cli(repo.dir, ['diff', runs[1]!.id]);
    expect(asRun.stdout).toBe(r.stdout);
    const json = JSON.parse((await cli(repo.dir, ['diff', id, '--attempt', '2', '--json'])).stdout);
    expect(json).toMatchObject({ group: group.name, attempt: 2, run: runs[1]!.name, in_progress: false });
    expect(json.patch).toContain('+new B');
  });

  it('--attempts j,k: git diff from j’s result to k’s; an attempt that changed nothing is its start commit', async () => {
    const { repo, id, sha, group } = await groupWithChanges();
    const r = await cli(repo.dir, ['diff', id, '--attempts', '1,2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('-new A\n+new B\n');
    expect(r.stderr).toMatch(
      new RegExp(
        `^group ${id}: from attempt 1's result \\([0-9a-f]{12}\\) to attempt 2's \\([0-9a-f]{12}\\)\\n$`,
      ),
    );
    const back = await cli(repo.dir, ['diff', id, '--attempts', '2,3']);
    expect(back.stdout).toContain('-new B\n+old\n');
    const json = JSON.parse((await cli(repo.dir, ['diff', id, '--attempts', '3,1', '--json'])).stdout);
    expect(json).toMatchObject({ group: group.name, attempts: [3, 1], from: sha });
    expect(json.patch).toContain('-old\n+new A\n');
  });

  it.each([
    [['--attempt', '9'], /^agentbox: group (\w+) has attempts 1 to 4, not "9"[\s\S]*agentbox show \1/],
    [['--attempt', 'x'], /has attempts 1 to 4, not "x"/],
    [
      ['--attempt', '4'],
      /^agentbox: attempt 4 of group (\w+) has not started: it waits its turn[\s\S]*agentbox show \1/,
    ],
    [
      ['--attempt', '3'],
      /^agentbox: attempt 3 of group \w+ \(run (\w+)\) has no changes \(no changes\.patch\)[\s\S]*agentbox show \1/,
    ],
    [['--attempts', '1'], /--attempts takes two attempts as j,k, not "1"/],
    [['--attempts', '2,2'], /--attempts 2,2 names attempt 2 twice/],
    [['--attempts', '1,4'], /attempt 4 of group \w+ has not started/],
    [['--attempt', '1', '--attempts', '1,2'], /--attempt and --attempts do not go together/],
  ])('%j is refused with the value and the next command', async (args, message) => {
    const { repo, id } = await groupWithChanges();
    const r = await cli(repo.dir, ['diff', id, ...args]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('--attempt on a run, and a group no attempt of which finished', async () => {
    const { repo, runs } = await groupWithChanges();
    const r = await cli(repo.dir, ['diff', runs[0]!.id, '--attempt', '1']);
    expect(r.stderr).toMatch(
      new RegExp(`--attempt takes a group; "${runs[0]!.id}" is not one[\\s\\S]*agentbox diff ${runs[0]!.id}`),
    );
    const ledger = openLedger(repo.dir);
    const { group } = await makeGroup(ledger, [{ status: 'CRASHED', failure: 'crashed' }, { status: null }]);
    const none = await cli(repo.dir, ['diff', group.meta.group_id]);
    expect(none.stderr).toMatch(
      /no attempt of group (\w+) has finished yet: none ranks first[\s\S]*agentbox show \1/,
    );
  });
});
