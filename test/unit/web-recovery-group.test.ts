import { describe, expect, it } from 'vitest';
import { updateGroupState } from '../../src/group/store.js';
import { interruptedRuns } from '../../src/web/recovery.js';
import { CLAUDE_BIN } from '../helpers/claude.js';
import { tempDir } from '../helpers/git-repo.js';
import { makeGroup } from './fixtures/group.js';
import { ledgerRepo } from './fixtures/ledger.js';

describe("the web UI's interrupted runs (agentbox ui, restart_mode ask)", () => {
  it('offer a group whose process is gone as one, and not its attempts one by one', async () => {
    const { repo, ledger } = ledgerRepo();
    const { group } = await makeGroup(ledger, [{ status: 'CRASHED', failure: 'crashed' }, { status: null }]);
    // Its process is gone (a kill -9): ACTIVE with a pid that does not run.
    await updateGroupState(ledger, group.name, () => ({ status: 'ACTIVE', pid: 999_999_99, pid_start: '1' }));
    const env = { HOME: tempDir(), AGENTBOX_CLAUDE_BIN: CLAUDE_BIN, PATH: process.env.PATH ?? '' };
    const offered = await interruptedRuns(repo.dir, env);
    expect(offered).toEqual([expect.objectContaining({ run: group.name, action: 'group' })]);
  });
});
