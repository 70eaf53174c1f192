import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run as runCli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { discardAction } from '../../src/web/actions.js';
import { runDetail } from '../../src/web/detail.js';
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

/**
 * Reads do not follow a link either: a run folder's `report.md` (or an agent's `artifacts/x`)
 * naming a secret of the person's is not an artifact, and a run folder that is itself a link is
 * not a run: neither `show`, the page nor `push` reads through them.
 */
describe('a planted link is never read as a run or an artifact', () => {
  it('report.md and artifacts/x that are links are not listed, not shown, not on the page', async () => {
    const { repo, ledger } = ledgerRepo();
    const secret = path.join(scratchDir(), 'id_rsa');
    fs.writeFileSync(secret, 'PRIVATE KEY 0xSECRET\n');
    const run = await create(ledger, 'a scout', '2026-03-01T10:00:00Z');
    fs.symlinkSync(secret, path.join(run.dir, 'report.md'));
    fs.mkdirSync(path.join(run.dir, 'artifacts'), { recursive: true });
    fs.symlinkSync(secret, path.join(run.dir, 'artifacts', 'x'));
    fs.writeFileSync(path.join(run.dir, 'artifacts', 'notes.md'), 'mine\n');
    const read = readRun(ledger, run.name);
    expect(read.files).toContain('artifacts/notes.md');
    expect(read.files).not.toContain('report.md');
    expect(read.files).not.toContain('artifacts/x');
    const page = await runDetail(ledger, repo.dir, run.id);
    expect(JSON.stringify(page)).not.toContain('0xSECRET');
    const io = memoryIo();
    await runCli(['show', run.id], { cwd: repo.dir, env: { ...GIT_ENV, PATH: process.env.PATH! }, io });
    expect(io.stdout + io.stderr).not.toContain('0xSECRET');
  });

  it('a run folder that is a link is refused, said, and nothing behind it is read', async () => {
    const { ledger } = ledgerRepo();
    const real = await create(ledger, 'a scout', '2026-03-01T10:00:00Z');
    const home = scratchDir();
    fs.cpSync(real.dir, home, { recursive: true });
    fs.writeFileSync(path.join(home, 'report.md'), 'PRIVATE 0xSECRET\n');
    fs.rmSync(real.dir, { recursive: true });
    fs.symlinkSync(home, real.dir);
    expect(() => readRun(ledger, real.name)).toThrow(/is a symbolic link, not a run folder: it is not read/);
  });
});
