import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRun, updateState } from '../../src/ledger/index.js';
import { readRevision } from '../../src/ledger/revisions.js';
import { interdiffOf } from '../../src/web/revisions.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * A fetched run's patch sets (issue 39) are its publication's claims, as its state.json is (issue
 * 37): a pusher can plant revisions/<k>/ files naming any commit it pushed on the run's branch, and
 * any patch. What `diff --revision k` and the page show of the last revision is the patch merge
 * applies; no commit a publication names is taken.
 */

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

/** What anyone with push access does with git alone: a commit on the run's branch, files replaced in its publication. */
function plant(o: Origin, run: string, benign: string, files: (commit: string) => Record<string, string>) {
  const dir = tempDir('agentbox-pusher-');
  const env = { ...process.env, ...GIT_ENV, GIT_INDEX_FILE: path.join(dir, 'index') };
  const g = (args: string[], input?: string) =>
    execFileSync('git', args, { cwd: o.dir, env, encoding: 'utf8', input: input ?? '' }).trim();
  const blob = (text: string) => g(['hash-object', '-w', '--stdin'], text);
  // The branch: main with a harmless src/app.ts, pushed where `agentbox fetch` reads run branches.
  g(['read-tree', 'main']);
  g(['update-index', '--add', '--cacheinfo', `100644,${blob(benign)},src/app.ts`]);
  const commit = g(['commit-tree', g(['write-tree']), '-p', 'main', '-m', 'looks fine']);
  g(['update-ref', `refs/heads/agentbox/${run}`, commit]);
  const ref = `refs/agentbox/runs/${run}`;
  const old = g(['rev-parse', ref]);
  g(['read-tree', old]);
  for (const [file, text] of Object.entries(files(commit)))
    g(['update-index', '--add', '--cacheinfo', `100644,${blob(text)},${file}`]);
  g(['update-ref', ref, g(['commit-tree', g(['write-tree']), '-p', old, '-m', 'revised'], ''), old]);
}

describe('a fetched run’s revisions are its publication’s claims', () => {
  it('diff --revision and the page show the last revision as the patch merge applies, never a commit the publication names', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const base = runner.repo.git('rev-parse', 'HEAD').trim();
    const run = await createRun(runner.ledger, {
      type: 'fix',
      task: 'bump x',
      envelope: ENVELOPE,
      repoShaStart: base,
      pid: process.pid,
      now: new Date('2026-03-01T10:00:00Z'),
    });
    runner.repo.write('src/app.ts', "export const x = 'evil';\n");
    const evil = runner.repo.git('diff');
    runner.repo.git('checkout', '--quiet', '--', '.');
    fs.writeFileSync(path.join(run.dir, 'changes.patch'), evil);
    await updateState(runner.ledger, run, { status: 'REVIEW' });
    expect((await runner.agentbox(['push', run.id])).code).toBe(0);
    const state = JSON.parse(fs.readFileSync(path.join(run.dir, 'state.json'), 'utf8'));
    const record = (k: number, commit: string | null, cost: unknown = 0.01) =>
      JSON.stringify({
        schema_version: 1,
        revision: k,
        status: 'REVIEW',
        started_at: '2026-03-01T10:00:00Z',
        ended_at: '2026-03-01T10:01:00Z',
        duration_ms: 60000,
        cost_usd: cost,
        verified: true,
        from_commit: k === 1 ? null : base,
        commit,
        feedback: null,
      });
    const revision = { number: 2, started_at: state.started_at, from_commit: base, cost_before_usd: 0 };
    plant(world, run.name, "export const x = 'benign';\n", (commit) => ({
      'state.json': JSON.stringify({ ...state, revision }),
      'revisions/1/revision.json': record(1, null),
      'revisions/2/revision.json': record(2, commit),
      'revisions/2/interdiff.patch': execFileSync('git', ['diff', base, commit], {
        cwd: world!.dir,
      }).toString(),
      'revisions/3/revision.json': record(3, null, '1'),
    }));
    expect((await laptop.agentbox(['fetch'])).stderr).toBe('');
    const dir = path.join(laptop.ledger.runsDir, run.name);

    // show says which revision it is on as its publication's word, as it says its status.
    expect((await laptop.agentbox(['show', run.id])).stdout).toMatch(/revision +2 \(claimed\) /);
    const shown = await laptop.agentbox(['diff', run.id, '--revision', '2', '--no-pager']);
    expect(shown.stdout).toContain("+export const x = 'evil';");
    expect(shown.stdout).not.toContain('benign');
    expect(shown.stderr).toContain('as its publication claims it');
    const json = JSON.parse((await laptop.agentbox(['diff', run.id, '--revision', '2', '--json'])).stdout);
    expect(json.patch).toContain("+export const x = 'evil';");
    expect(json.claimed).toBe(true);
    const page = await interdiffOf(laptop.ledger, laptop.repo.dir, run.id, '2');
    expect(page.patch).toContain("+export const x = 'evil';");
    expect(page.patch).not.toContain('benign');
    expect(page.claimed).toBe(true);
    // A record whose fields are not what agentbox writes is no record (the page draws its numbers).
    expect(readRevision(dir, 3)).toBeNull();
    expect(readRevision(dir, 2)).toMatchObject({ revision: 2, cost_usd: 0.01 });
  });
});
