import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readState } from '../../src/ledger/index.js';
import { mergeAction } from '../../src/web/actions.js';
import { runDetail } from '../../src/web/detail.js';
import { HttpError } from '../../src/web/http.js';
import { shownAction } from '../../src/web/shown.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { fixRun } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * What comes from another machine is a claim (issue 37, item 4), in-process on real repositories:
 * a runner publishes, anyone who can push to the remote rewrites the publication (its state.json,
 * events.jsonl, changes.patch), and a laptop fetches, reviews and merges. The rewritten status and
 * verification are shown as claimed by the rewriter's commit identity and refused by `merge --yes`;
 * a patch replaced after the person saw it is said at fetch and refused until shown again.
 */

let world: Origin | undefined;
const scratch: string[] = [];
afterEach(() => {
  world?.cleanup();
  world = undefined;
  for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const MALLORY = { name: 'Mallory Pusher', email: 'mallory@evil.example' };

/**
 * What anyone with push access does, by hand with git (no agentbox): the run's publication with
 * some files replaced, committed under their own identity on top of it, pushed.
 */
function republish(o: Origin, run: string, files: Record<string, string>): void {
  const dir = tempDir('agentbox-pusher-');
  scratch.push(dir);
  const env = {
    ...process.env,
    ...GIT_ENV,
    GIT_AUTHOR_NAME: MALLORY.name,
    GIT_AUTHOR_EMAIL: MALLORY.email,
    GIT_COMMITTER_NAME: MALLORY.name,
    GIT_COMMITTER_EMAIL: MALLORY.email,
    GIT_INDEX_FILE: path.join(dir, 'index'),
  };
  const g = (args: string[], input?: string) =>
    execFileSync('git', args, {
      cwd: o.dir,
      env,
      encoding: 'utf8',
      ...(input === undefined ? {} : { input }),
    }).trim();
  const ref = `refs/agentbox/runs/${run}`;
  const old = g(['rev-parse', ref]);
  g(['read-tree', old]);
  for (const [file, text] of Object.entries(files)) {
    const blob = g(['hash-object', '-w', '--stdin'], text);
    g(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`]);
  }
  const commit = g(['commit-tree', g(['write-tree']), '-p', old, '-m', 'fixed it'], '');
  g(['update-ref', ref, commit, old]);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const events = (dir: string) =>
  fs
    .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('a fetched run is what its publication claims', () => {
  it('a rewritten state.json and events.jsonl (ABORTED → REVIEW, verify failed → passed) is shown as claimed, by whom, and refused by merge --yes', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const failedVerify = '{"event":"verify","ok":false,"detail":"npm test exited 1"}';
    const run = await fixRun(runner.repo, runner.ledger, 'bump x', {
      status: 'ABORTED',
      verified: false,
      events: [failedVerify, failedVerify, failedVerify],
    });
    expect((await runner.agentbox(['push', run.id])).code).toBe(0);
    // The honest publication first: claimed too (it was not checked here either), by the runner's git identity.
    await laptop.agentbox(['fetch']);
    const honest = await laptop.agentbox(['show', run.id]);
    expect(honest.stdout).toContain(
      'claims ABORTED · verify FAILED · $0.42 (claimed by Agentbox Test <test@agentbox.invalid>, not checked here)',
    );

    // Someone with push access rewrites it: it passed, it says.
    const state = JSON.parse(fs.readFileSync(path.join(run.dir, 'state.json'), 'utf8'));
    republish(world, run.name, {
      'state.json': JSON.stringify({
        ...state,
        status: 'REVIEW',
        failure: null,
        output: { ...state.output, verified: true },
        publication: {
          commit: 'f'.repeat(40),
          author: 'Trusted CI <ci@corp>',
          committer: 'x',
          fetched_at: 'x',
        },
      }),
      'events.jsonl': '{"event":"verify","ok":true,"detail":"npm test passed"}\n',
    });
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stdout).toContain('0 new, 1 updated');
    const dir = path.join(laptop.ledger.runsDir, run.name);
    expect(readState(dir)?.status).toBe('REVIEW');
    const by = `${MALLORY.name} <${MALLORY.email}>`;

    // status: the status and cost marked as claims, and said so; --json names who claims them.
    const table = (await laptop.agentbox(['status'])).stdout;
    expect(table).toMatch(/REVIEW\* +\S+ +\$0\.42\*/);
    expect(table).toContain(
      '* claimed by the publication of a run fetched from another machine, not checked here',
    );
    const rows = JSON.parse((await laptop.agentbox(['status', '--json'])).stdout).runs;
    expect(rows[0]).toMatchObject({ status: 'REVIEW', claimed_by: by, ran_on: 'runner.example' });
    const all = JSON.parse((await laptop.agentbox(['status', '--all', '--json'])).stdout).runs;
    expect(all[0]).toMatchObject({ status: 'REVIEW', claimed_by: by });

    // show: the claim first, by the rewriter's identity — not the one its state.json names.
    const shown = await laptop.agentbox(['show', run.id]);
    expect(shown.stdout).toContain(
      `! ran on runner.example (fetched from origin): its publication claims REVIEW · verify passed · $0.42 (claimed by ${by}, not checked here)`,
    );
    expect(shown.stdout).toMatch(/status +REVIEW \(claimed by its publication, not checked here\)/);
    expect(shown.stdout).not.toContain('Trusted CI');
    const json = JSON.parse((await laptop.agentbox(['show', run.id, '--json'])).stdout);
    expect(json.claim).toMatchObject({ by, status: 'REVIEW', verified: true, checked_here: false });
    expect(json.claim.publication).toBe(world.git('rev-parse', `refs/agentbox/runs/${run.name}`).trim());

    // merge --yes: refused, logged, nothing changed; the prompt says the same before it asks.
    const refused = await laptop.agentbox(['merge', run.id, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `refusing to merge ${run.name} with --yes: it ran on runner.example (fetched from origin): its publication claims REVIEW · verify passed`,
    );
    expect(refused.stderr).toContain(`agentbox merge ${run.id} --yes --force`);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');
    expect(events(dir).at(-1)).toMatchObject({ event: 'merge_refused', reason: 'claimed' });
    const asked = await laptop.agentbox(['merge', run.id], ['n']);
    expect(asked.stdout).toMatch(/^! ran on runner\.example .*claims REVIEW · verify passed/);
    expect(asked.stdout).toContain('(runner.example claims REVIEW, not checked here)');
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');

    // --force takes the claim as it is: merged, with the hash of what was applied.
    const patch = fs.readFileSync(path.join(dir, 'changes.patch'), 'utf8');
    const forced = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(forced.stderr).toBe('');
    expect(forced.stdout).toContain(`patch sha256 ${sha256(patch)}`);
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'bump x';\n");
  });

  it('a publication’s review record, in any spelling (another case, a folder under its name), is never this machine’s', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'bump x', { status: 'REVIEW', verified: true });
    await runner.agentbox(['push', run.id]);
    const patch = fs.readFileSync(path.join(run.dir, 'changes.patch'), 'utf8');
    const forged = `{"v":1,"ts":"2026-03-01T10:00:00.000Z","event":"shown","sha256":"${sha256(patch)}","by":"diff"}\n`;
    // On a case-insensitive file system (macOS, Windows) the first is reviewed.jsonl itself.
    republish(world, run.name, { 'REVIEWED.jsonl': forged, 'reviewed.jsonl/x': forged });
    expect((await laptop.agentbox(['fetch'])).stderr).toBe('');
    const dir = path.join(laptop.ledger.runsDir, run.name);
    expect(fs.readdirSync(dir).filter((f) => f.toLowerCase().startsWith('reviewed'))).toEqual([]);
    // `diff` shows it and records that here, in this machine's own record.
    const diff = await laptop.agentbox(['diff', run.id, '--no-pager']);
    expect(diff.stderr).toBe('');
    expect(fs.readFileSync(path.join(dir, 'reviewed.jsonl'), 'utf8')).not.toContain(
      '2026-03-01T10:00:00.000Z',
    );
  });

  it('a patch replaced after `diff`: fetch says so, merge refuses it until it is shown again, then merges the new one and prints its hash', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'bump x', { status: 'REVIEW', verified: true });
    await runner.agentbox(['push', run.id]);
    await laptop.agentbox(['fetch']);
    const dir = path.join(laptop.ledger.runsDir, run.name);
    const reviewed = fs.readFileSync(path.join(dir, 'changes.patch'), 'utf8');
    const diff = await laptop.agentbox(['diff', run.id, '--no-pager']);
    expect(diff.stdout).toContain("+export const x = 'bump x';");

    const evil = reviewed.replaceAll("'bump x'", "'evil'");
    // The rewriter also claims the person saw it: this machine's record is not a publication's to write.
    const forged = `{"v":1,"ts":"2026-03-01T10:00:00.000Z","event":"shown","sha256":"${sha256(evil)}","by":"diff"}\n`;
    republish(world, run.name, { 'changes.patch': evil, 'reviewed.jsonl': forged });
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stdout).toContain(
      `  changed  ${run.name}: patch ${sha256(reviewed).slice(0, 12)} → ${sha256(evil).slice(0, 12)}, marked unreviewed`,
    );
    expect(fetched.stdout).not.toContain(`  updated  ${run.name}`);
    const record = fs.readFileSync(path.join(dir, 'reviewed.jsonl'), 'utf8');
    expect(record).not.toContain('2026-03-01T10:00:00.000Z');
    expect(record).toContain(`"event":"unreviewed","sha256":"${sha256(evil)}","was":"${sha256(reviewed)}"`);
    expect((await laptop.agentbox(['show', run.id])).stdout).toMatch(
      /✗ the patch changed since it was last shown here \(by diff at .*\): [0-9a-f]{12} → [0-9a-f]{12}/,
    );

    // Refused with --yes, --force or not: --force takes a claim, never an unseen patch.
    for (const flags of [['--yes'], ['--yes', '--force']]) {
      const refused = await laptop.agentbox(['merge', run.id, ...flags]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `refusing to merge ${run.name} with --yes: the patch changed since it was last shown here`,
      );
      expect(refused.stderr).toContain(`agentbox diff ${run.id}`);
    }
    expect(events(dir).at(-1)).toMatchObject({ event: 'merge_refused', reason: 'patch_changed' });
    // A later publication replaces events.jsonl: the refusals logged here stay.
    republish(world, run.name, { 'events.jsonl': '{"event":"Stop"}\n' });
    await laptop.agentbox(['fetch']);
    expect(events(dir).map((e) => e.event)).toEqual(['Stop', 'merge_refused', 'merge_refused']);
    // Asked: a yes does not count before the new patch is shown.
    const asked = await laptop.agentbox(['merge', run.id], ['y', '']);
    expect(asked.stdout).toContain('The patch changed since you last saw it: show it first (d).');
    expect(asked.stdout).toContain('Nothing changed.');
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');

    // Shown again: the new one is merged, its hash printed.
    await laptop.agentbox(['diff', run.id, '--no-pager']);
    const merged = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(merged.stderr).toBe('');
    expect(merged.stdout).toContain(`patch sha256 ${sha256(evil)}`);
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'evil';\n");
    // The ledger's log says which patch was applied.
    const index = fs.readFileSync(laptop.ledger.indexJsonl, 'utf8').trim().split('\n');
    expect(JSON.parse(index.at(-1)!)).toMatchObject({ run: run.name, event: 'merged' });
    expect(JSON.parse(index.at(-1)!).detail).toContain(`patch sha256 ${sha256(evil)}`);
  });

  it('the rule is the same for a run of this machine: a patch that changed since it was shown is refused; one never shown merges with --yes as before', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n', 'src/b.ts': 'export const b = 1;\n' });
    const laptop = machine(world, 'laptop');
    const never = await fixRun(laptop.repo, laptop.ledger, 'never shown', {
      status: 'REVIEW',
      verified: true,
    });
    const scripted = await laptop.agentbox(['merge', never.id, '--yes']);
    expect(scripted.stderr).toBe('');
    expect(scripted.stdout).toContain(
      `patch sha256 ${sha256(fs.readFileSync(path.join(never.dir, 'changes.patch'), 'utf8'))}`,
    );
    laptop.repo.git('checkout', '--quiet', '--', '.');

    const run = await fixRun(laptop.repo, laptop.ledger, 'resumed', { status: 'REVIEW', verified: true });
    await laptop.agentbox(['diff', run.id, '--no-pager']);
    // A resume rewrites changes.patch after REVIEW.
    const file = path.join(run.dir, 'changes.patch');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll("'resumed'", "'resumed again'"));
    const refused = await laptop.agentbox(['merge', run.id, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the patch changed since it was last shown here (by diff at');
    // Asked: the prompt's `d` shows the new patch (and records it), then a yes counts.
    const asked = await laptop.agentbox(['merge', run.id], ['d', 'y']);
    expect(asked.stdout).toContain('[d = show the new patch first]');
    expect(asked.stdout).toContain("+export const x = 'resumed again';");
    expect(asked.stdout).toMatch(/merged 1 file\(s\)[\s\S]*patch sha256 [0-9a-f]{64}/);
    expect(fs.readFileSync(path.join(run.dir, 'reviewed.jsonl'), 'utf8')).toContain('"by":"merge"');
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'resumed again';\n");
  });

  it('the web merge endpoint: a fetched run needs force, and the patch merged is the one the page showed', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'bump x', { status: 'REVIEW', verified: true });
    await runner.agentbox(['push', run.id]);
    await laptop.agentbox(['fetch']);
    const ac = { root: laptop.repo.dir, ledger: laptop.ledger, env: laptop.env };
    const refusal = async (body: Record<string, unknown>) => {
      try {
        await mergeAction(ac, run.id, body);
      } catch (error) {
        if (error instanceof HttpError) return error;
        throw error;
      }
      throw new Error('merged');
    };
    const page = await runDetail(laptop.ledger, laptop.repo.dir, run.id);
    expect(page.claim).toMatchObject({ by: 'Agentbox Test <test@agentbox.invalid>', status: 'REVIEW' });
    expect(page.claim_line).toContain('its publication claims REVIEW · verify passed');
    const first = page.patch_sha256!;
    expect(first).toBe(sha256(page.patch!));
    // The page, once it drew the patch in a tab in front, says so (web/shown.js).
    shownAction(laptop.ledger, run.id, { patch_sha256: first });

    const claimed = await refusal({ commit: false, patch_sha256: first });
    expect(claimed.status).toBe(409);
    expect(claimed.message).toContain('its publication claims REVIEW');

    // Replaced after the page drew it: the page's hash is refused, force or not.
    republish(world, run.name, { 'changes.patch': page.patch!.replaceAll("'bump x'", "'evil'") });
    await laptop.agentbox(['fetch']);
    const stale = await refusal({ commit: false, force: true, patch_sha256: first });
    expect(stale.status).toBe(409);
    expect(stale.message).toContain(`the patch changed since the page showed it: ${first.slice(0, 12)} →`);
    // A caller that sends no hash meets the ledger's record (the page showed the first one).
    expect((await refusal({ commit: false, force: true })).message).toContain(
      'the patch changed since it was last shown here (by ui at',
    );
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');

    const again = await runDetail(laptop.ledger, laptop.repo.dir, run.id);
    const merged = await mergeAction(ac, run.id, {
      commit: false,
      force: true,
      patch_sha256: again.patch_sha256,
    });
    expect(merged.patch_sha256).toBe(again.patch_sha256);
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'evil';\n");
  });
});

describe('merge --yes of a fetched run checks its claim here', () => {
  // runs.verify reads the file, and tries to write outside its folder: the box lets it do neither
  // with the person's tree (the write is refused, the check still passes on the patch's content).
  const files = {
    'src/app.ts': 'export const x = 1;\n',
    'verify.sh': `echo pwned > "$AGENTBOX_REPO_ROOT/pwned" || echo "write refused"\ngrep -q "'good'" src/app.ts\n`,
    'agentbox.yaml': 'runs:\n  verify: sh verify.sh\n',
  };

  it('runs.verify in a box on the patch applied to HEAD: a passing patch merges, a failing one is refused whatever its run claims', async () => {
    world = origin(files);
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    expect((await laptop.agentbox(['trust', '--yes'])).code).toBe(0);
    const bad = await fixRun(runner.repo, runner.ledger, 'bad', { status: 'REVIEW', verified: true });
    const good = await fixRun(runner.repo, runner.ledger, 'good', { status: 'REVIEW', verified: true });
    await runner.agentbox(['push', bad.id]);
    await runner.agentbox(['push', good.id]);
    await laptop.agentbox(['fetch']);

    const refused = await laptop.agentbox(['merge', bad.id, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('checking it here: runs.verify, in a box, on the patch applied to HEAD');
    expect(refused.stderr).toContain('its publication claims REVIEW · verify passed');
    expect(refused.stderr).toContain(
      'it could not be checked here: runs.verify "sh verify.sh" failed (exit code 1)',
    );
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');
    const badDir = path.join(laptop.ledger.runsDir, bad.name);
    expect(events(badDir).find((e) => e.event === 'verified_here')).toMatchObject({ ok: false });

    const merged = await laptop.agentbox(['merge', good.id, '--yes']);
    expect(merged.stderr).toBe('');
    expect(merged.stdout).toContain('✓ runs.verify "sh verify.sh" passed here');
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'good';\n");
    expect(fs.existsSync(path.join(laptop.repo.dir, 'pwned'))).toBe(false);
    const out = fs.readFileSync(
      path.join(laptop.ledger.runsDir, good.name, 'raw', 'verify-here.log'),
      'utf8',
    );
    expect(out).toMatch(/Read-only file system|Permission denied/);
    expect(out).toContain('write refused');
    // Nothing of the check is left in the person's repository.
    expect(laptop.repo.git('status', '--porcelain', '--', 'src', 'verify.sh')).toBe(' M src/app.ts\n');
  });

  it('without a runs.verify it can run (not set, or the repository not trusted), --yes needs --force, and says both ways', async () => {
    world = origin(files);
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const good = await fixRun(runner.repo, runner.ledger, 'good', { status: 'REVIEW', verified: true });
    await runner.agentbox(['push', good.id]);
    await laptop.agentbox(['fetch']);
    const refused = await laptop.agentbox(['merge', good.id, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'runs.verify is not set in agentbox.yaml (or the repository is not trusted: agentbox trust)',
    );
    expect(refused.stderr).toContain(`agentbox merge ${good.id} --yes --force`);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 1;\n');
  });
});
