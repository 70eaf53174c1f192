import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run as runCli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { updateState } from '../../src/ledger/index.js';
import { discardAction } from '../../src/web/actions.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { create, ledgerRepo, scratchDir } from './fixtures/ledger.js';

/**
 * A ledger a cloned repository carries can hold symbolic links (git stores them): a run folder's
 * `events.jsonl`, or the ledger's `INDEX.jsonl`, naming a file of the person's (`~/.bashrc`).
 * agentbox appends JSON lines that hold the planted run's own words — a task, a branch name — and a
 * line like `{"task":"$(curl …|sh)"}` in a shell's rc file runs at the next shell. The ledger's
 * logs are appended only to the file itself, never through a link.
 */
describe('a planted ledger never gets a line appended through a link', () => {
  const planted = async () => {
    const { repo, ledger } = ledgerRepo();
    const victims = scratchDir();
    const rc = path.join(victims, 'bashrc');
    const other = path.join(victims, 'profile');
    fs.writeFileSync(rc, 'export X=1\n');
    fs.writeFileSync(other, 'export Y=1\n');
    const run = await create(ledger, 'fix $(touch /tmp/pwned)', '2026-03-01T10:00:00Z', { type: 'fix' });
    const events = path.join(run.dir, 'events.jsonl');
    fs.rmSync(events, { force: true });
    fs.symlinkSync(rc, events);
    fs.rmSync(ledger.indexJsonl, { force: true });
    fs.symlinkSync(other, ledger.indexJsonl);
    const untouched = () => {
      expect(fs.readFileSync(rc, 'utf8')).toBe('export X=1\n');
      expect(fs.readFileSync(other, 'utf8')).toBe('export Y=1\n');
    };
    return { repo, ledger, run, untouched };
  };

  it('agentbox status (the watchdog marks a planted ACTIVE run CRASHED)', async () => {
    const { repo, ledger, run, untouched } = await planted();
    await updateState(ledger, run.name, { status: 'ACTIVE', pid: 2 ** 22 + 7 }).catch(() => {});
    await runCli(['status'], { cwd: repo.dir, env: { ...GIT_ENV, HOME: repo.dir }, io: memoryIo() });
    untouched();
  });

  it("the page's Discard of a planted run naming the person's branch", async () => {
    const { repo, ledger, run, untouched } = await planted();
    await updateState(ledger, run.name, { status: 'REVIEW', branch: 'x$(touch /tmp/pwned)' }).catch(() => {});
    const refused = await discardAction({ root: repo.dir, ledger, env: {} }, run.id).catch((e: Error) => e);
    untouched();
    // The ledger's INDEX.jsonl is the link: said, and nothing written through it.
    expect((refused as Error).message).toMatch(/INDEX\.jsonl is a symbolic link: .* never through a link/);
  });
});
