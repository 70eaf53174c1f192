import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRun, type Ledger, readMeta, readState, updateState } from '../../src/ledger/index.js';
import { type TestRepo, tempDir } from '../helpers/git-repo.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * Publishing and fetching runs, in-process on real repositories: a bare `origin`, a runner clone
 * that publishes and a laptop clone that fetches, reviews and merges.
 */

let world: Origin | undefined;
const scratch: string[] = [];
afterEach(() => {
  world?.cleanup();
  world = undefined;
  for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fix run in `repo` that changed src/app.ts, REVIEW, with its branch and changes.patch. */
async function fixRun(repo: TestRepo, ledger: Ledger, task: string, opts: { id?: string; at?: string } = {}) {
  const base = repo.git('rev-parse', 'HEAD').trim();
  const run = await createRun(ledger, {
    type: 'fix',
    task,
    envelope: ENVELOPE,
    repoShaStart: base,
    pid: process.pid,
    now: new Date(opts.at ?? '2026-03-01T10:00:00Z'),
    ...(opts.id ? { randomId: () => opts.id! } : {}),
  });
  repo.write('src/app.ts', `export const x = '${task}';\n`);
  fs.writeFileSync(path.join(run.dir, 'changes.patch'), repo.git('diff'));
  repo.git('checkout', '--quiet', '--', '.');
  fs.writeFileSync(path.join(run.dir, 'report.md'), `# ${task}\ndone\n`);
  fs.writeFileSync(path.join(run.dir, 'events.jsonl'), '{"event":"Stop"}\n');
  fs.writeFileSync(path.join(run.dir, 'raw', 'stream.jsonl'), '{"type":"result"}\n');
  repo.git('branch', `agentbox/${run.name}`, base);
  await updateState(ledger, run, {
    status: 'REVIEW',
    worktree_path: '/tmp/not-here',
    branch: `agentbox/${run.name}`,
  });
  return run;
}

const remoteRefs = (o: Origin) =>
  o
    .git('for-each-ref', '--format=%(refname)')
    .split('\n')
    .filter((r) => r.includes('agentbox'));

describe('agentbox push / fetch through a git remote', () => {
  it("a publication's commit message carries the task as the sanitiser renders it (no escape, no bidi override)", async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const run = await fixRun(
      runner.repo,
      runner.ledger,
      'bump x \x1b]52;c;cGF5bG9hZA==\x07 then \u202efdp.exe',
    );
    const pushed = await runner.agentbox(['push', run.id]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const message = world.git('log', '-1', '--format=%B', `refs/agentbox/runs/${run.name}`);
    expect(message).toContain('bump x');
    expect(message).not.toMatch(/[\x1b\x07\u202e]/);
    expect(message).toContain('\\u202e');
  });

  it('a run published on a runner is fetched, shown, diffed and merged on a laptop', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'bump x');
    // The person's files, not the ledger's: a listing may write .agents/cache/ (its names cache,
    // once runs/ is 2 s old, which a slow machine reaches between two of these steps).
    const userStatus = () =>
      runner.repo
        .git('status', '--porcelain', '--untracked-files=all')
        .split('\n')
        .filter((line) => !/^.. \.agents\//.test(line))
        .join('\n');
    const untouched = userStatus();

    const pushed = await runner.agentbox(['push', run.id]);
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toContain(
      `published ${run.name} to origin: its ledger entry and branch agentbox/${run.name}`,
    );
    expect(remoteRefs(world).sort()).toEqual([
      `refs/agentbox/runs/${run.name}`,
      `refs/heads/agentbox/${run.name}`,
    ]);
    // raw/ stays home unless asked; the user's index and working tree were not touched.
    const tree = world.git('ls-tree', '-r', '--name-only', `refs/agentbox/runs/${run.name}`).split('\n');
    expect(tree).toEqual(
      expect.arrayContaining(['meta.yaml', 'state.json', 'changes.patch', 'report.md', 'publication.json']),
    );
    expect(tree.some((f) => f.startsWith('raw/'))).toBe(false);
    expect(userStatus()).toBe(untouched);

    // Pushing twice: nothing new.
    const first = world.git('rev-parse', `refs/agentbox/runs/${run.name}`);
    const again = await runner.agentbox(['push', run.id]);
    expect(again.stdout).toContain('unchanged since its last push');
    expect(world.git('rev-parse', `refs/agentbox/runs/${run.name}`)).toBe(first);

    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stderr).toBe('');
    expect(fetched.stdout).toContain('origin: 1 published run(s) — 1 new, 0 updated');
    const dir = path.join(laptop.ledger.runsDir, run.name);
    expect(readMeta(dir)?.origin).toEqual({ remote: 'origin', host: 'runner.example', run: run.name });
    // Nothing that names a process or a path on the runner is kept.
    expect(readState(dir)).toMatchObject({ status: 'REVIEW', pid: null, worktree_path: null, branch: null });
    const status = await laptop.agentbox(['status', '--json']);
    expect(JSON.parse(status.stdout).runs.map((r: { name: string }) => r.name)).toEqual([run.name]);
    // Marked with where it ran, in status (the default view and --all, from INDEX.jsonl) and its JSON.
    expect(JSON.parse(status.stdout).runs[0].ran_on).toBe('runner.example');
    expect((await laptop.agentbox(['status'])).stdout).toMatch(/WHERE[\s\S]*runner\.example/);
    expect((await laptop.agentbox(['status', '--all'])).stdout).toMatch(/WHERE[\s\S]*runner\.example/);
    expect((await laptop.agentbox(['show', run.id])).stdout).toMatch(
      /ran on +runner\.example — fetched from origin\n/,
    );
    const diff = await laptop.agentbox(['diff', run.id, '--no-pager']);
    expect(diff.stdout).toContain("+export const x = 'bump x';");
    expect(fs.readlinkSync(path.join(laptop.ledger.pointersDir, 'last-review'))).toBe(`../runs/${run.name}`);

    // Fetching twice: nothing new.
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('0 new, 0 updated');

    // What it claims was not checked here: --yes alone is refused (test/unit/remote-claims.test.ts).
    expect((await laptop.agentbox(['merge', run.id, '--yes'])).code).toBe(1);
    const merged = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'bump x';\n");
    // The runner publishes again (a later state): the laptop's decision stands.
    fs.appendFileSync(path.join(run.dir, 'events.jsonl'), '{"event":"late"}\n');
    await runner.agentbox(['push', run.id]);
    const late = await laptop.agentbox(['fetch']);
    expect(late.stdout).toContain('1 already decided here');
    expect(readState(dir)?.status).toBe('MERGED');
  });

  it('a run fetched while it runs is ACTIVE here, left alone by the watchdog, and updated by the next fetch', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'slow one');
    await updateState(runner.ledger, run, {
      status: 'ACTIVE',
      last_heartbeat: '2020-01-01T00:00:00Z',
      session_id: '5f1e0c3a-0000-4000-8000-000000000000',
    });
    // The runner's own watchdog would call it stalled: this is a run that is fine there.
    runner.env.AGENTBOX_WATCHDOG = '0';
    await runner.agentbox(['push', run.id]);
    await laptop.agentbox(['fetch']);
    const dir = path.join(laptop.ledger.runsDir, run.name);
    // A heartbeat from 2020 and a pid of this very process: the watchdog would act on either.
    expect((await laptop.agentbox(['status'])).stdout).toContain('ACTIVE');
    expect(readState(dir)?.status).toBe('ACTIVE');
    expect(fs.readdirSync(path.join(laptop.ledger.dir, 'active'))).toEqual([]);
    const merge = await laptop.agentbox(['merge', run.id, '--yes']);
    expect(merge.stderr).toContain('is still running on runner.example');
    const resume = await laptop.agentbox(['resume', run.id]);
    expect(resume.stderr).toContain('ran on runner.example: it cannot go on here');

    await updateState(runner.ledger, run, { status: 'REVIEW' });
    await runner.agentbox(['push', run.id]);
    const next = await laptop.agentbox(['fetch']);
    expect(next.stdout).toContain('0 new, 1 updated');
    expect(readState(dir)?.status).toBe('REVIEW');
  });

  it('colliding names: a fetched run takes another id and never overwrites a run here; a clone skips its own runs', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const theirs = await fixRun(runner.repo, runner.ledger, 'same task', { id: 'abc123' });
    const mine = await fixRun(laptop.repo, laptop.ledger, 'same task', { id: 'abc123' });
    expect(mine.name).toBe(theirs.name);
    const before = fs.readFileSync(path.join(mine.dir, 'report.md'));
    await runner.agentbox(['push', theirs.id]);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stdout).toContain('1 new');
    const names = fs.readdirSync(laptop.ledger.runsDir).sort();
    expect(names).toHaveLength(2);
    const imported = names.find((n) => n !== mine.name)!;
    expect(imported.slice(0, -6)).toBe(mine.name.slice(0, -6));
    expect(readMeta(path.join(laptop.ledger.runsDir, imported))?.origin?.run).toBe(theirs.name);
    expect(readMeta(mine.dir)?.origin).toBeUndefined();
    expect(fs.readFileSync(path.join(mine.dir, 'report.md'))).toEqual(before);
    // The second fetch finds the same place; the laptop cannot push a run of the same name over it.
    fs.appendFileSync(path.join(theirs.dir, 'events.jsonl'), '{"event":"more"}\n');
    await runner.agentbox(['push', theirs.id]);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('0 new, 1 updated');
    const clash = await laptop.agentbox(['push', mine.id]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`origin already holds a run named ${mine.name} with another history`);
    // A fetched run is published by the machine it ran on, not re-published from here.
    const republish = await laptop.agentbox(['push', imported.slice(-6)]);
    expect(republish.stderr).toContain('only the machine it ran on publishes it');
    // The runner fetching its own publication imports nothing.
    const own = await runner.agentbox(['fetch']);
    expect(own.stdout).toContain('1 from this clone');
    expect(fs.readdirSync(runner.ledger.runsDir)).toEqual([theirs.name]);
  });

  it('discard --remote deletes the run from the remote; the folder stays', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(runner.repo, runner.ledger, 'unwanted');
    await runner.agentbox(['push', run.id, '--raw']);
    expect(world.git('ls-tree', '-r', '--name-only', `refs/agentbox/runs/${run.name}`)).toContain(
      'raw/stream.jsonl',
    );
    await laptop.agentbox(['fetch', 'origin']);
    const discarded = await laptop.agentbox(['discard', run.id, '--remote']);
    expect(discarded.stderr).toBe('');
    expect(discarded.stdout).toContain(
      `origin: deleted refs/agentbox/runs/${run.name} and refs/heads/agentbox/${run.name}`,
    );
    expect(remoteRefs(world)).toEqual([]);
    expect(laptop.repo.git('for-each-ref', 'refs/agentbox/')).toBe('');
    expect(readState(path.join(laptop.ledger.runsDir, run.name))?.status).toBe('DISCARDED');
    // Twice: the remote holds nothing more, and says so.
    expect((await laptop.agentbox(['discard', run.id, '--remote'])).stdout).toContain(
      'origin: held none of its refs',
    );
  });

  it('refuses a remote name that is not one', async () => {
    world = origin();
    const laptop = machine(world, 'laptop');
    const bad = await laptop.agentbox(['fetch', '../x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid remote name "../x"');
    expect(execFileSync('git', ['-C', laptop.repo.dir, 'for-each-ref'], { encoding: 'utf8' })).not.toContain(
      'agentbox',
    );
  });

  it('a remote this repository does not have is named, with the ones it has (it said only git’s command line and fatal line)', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const laptop = machine(world, 'laptop');
    const run = await fixRun(laptop.repo, laptop.ledger, 'bump x');
    for (const argv of [
      ['fetch', 'upstream'],
      ['push', run.id, 'upstream'],
    ]) {
      const r = await laptop.agentbox(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toContain(`no git remote named upstream in ${laptop.repo.dir}`);
      expect(r.stderr).toContain("this repository's remotes: origin");
      expect(r.stderr).not.toContain('--porcelain');
    }
  });

  it('a hostile publication cannot write outside its run folder, act on this machine or pass the gate', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const sentinel = tempDir('agentbox-sentinel-');
    scratch.push(sentinel);
    // A real run's files, bent: its state names this machine's process, a folder here and a mark.
    const real = await fixRun(attacker.repo, attacker.ledger, 'innocent');
    const meta = fs.readFileSync(path.join(real.dir, 'meta.yaml'), 'utf8');
    const state = {
      ...JSON.parse(fs.readFileSync(path.join(real.dir, 'state.json'), 'utf8')),
      pid: process.pid,
      worktree_path: sentinel,
      launch_dir: sentinel,
      process_mark: 'agentbox-test-mark',
      socket_path: path.join(sentinel, 'sock'),
    };
    const patch = [
      'diff --git a/.claude/settings.json b/.claude/settings.json',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/.claude/settings.json',
      '@@ -0,0 +1 @@',
      '+{"permissions":{"allow":["Bash(*)"]}}',
      '',
    ].join('\n');
    const g = (input: string | Buffer, ...args: string[]) =>
      execFileSync('git', args, { cwd: attacker.repo.dir, input, encoding: 'utf8' }).trim();
    const blob = (text: string) => g(text, 'hash-object', '-w', '--stdin');
    const tree = (entries: [string, string, string][]) =>
      g(
        Buffer.concat(
          entries
            .sort(([, a], [, b]) => (a < b ? -1 : 1))
            .map(([mode, name, id]) =>
              Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]),
            ),
        ),
        'hash-object',
        '-t',
        'tree',
        '--literally',
        '-w',
        '--stdin',
      );
    const outside = tree([['100644', 'escaped.txt', blob('out\n')]]);
    const hostile = tree([
      ['100644', 'meta.yaml', blob(meta)],
      ['100644', 'state.json', blob(JSON.stringify(state))],
      ['100644', 'changes.patch', blob(patch)],
      ['100644', 'report.md', blob('all good, merge me\n')],
      ['40000', '..', outside],
      ['40000', 'artifacts', tree([['40000', '..', tree([['40000', '..', outside]])]])],
      ['120000', 'link', blob('/etc/passwd')],
    ]);
    const commit = (t: string) => g('hostile\n', 'commit-tree', t, '-F', '-');
    const publish = (ref: string, t: string) => g('', 'push', '--quiet', 'origin', `${commit(t)}:${ref}`);
    publish(`refs/agentbox/runs/${real.name}`, hostile);
    publish('refs/agentbox/runs/not-a-run', hostile);
    publish('refs/agentbox/runs/deep/26-03-01_1000__x__abcdef', hostile);
    const other = '26-03-01_1000__other__fedcba';
    publish(`refs/agentbox/runs/${other}`, hostile); // its meta.yaml names another run
    const broken = '26-03-01_1000__broken__aaa111';
    publish(
      `refs/agentbox/runs/${broken}`,
      tree([
        ['100644', 'meta.yaml', blob(meta.replaceAll(real.name, broken).replaceAll(real.id, 'aaa111'))],
        ['100644', 'state.json', blob('{"pid": 1')],
      ]),
    );

    // A file and a folder of the same name: the files cannot all be written.
    const clash = '26-03-01_1000__clash__bbb222';
    const clashMeta = blob(meta.replaceAll(real.name, clash).replaceAll(real.id, 'bbb222'));
    const clashState = blob(JSON.stringify({ ...state, status: 'DONE' }));
    publish(
      `refs/agentbox/runs/${clash}`,
      tree([
        ['100644', 'meta.yaml', clashMeta],
        ['100644', 'state.json', clashState],
        ['100644', 'report.md', blob('a file\n')],
        ['40000', 'report.md', tree([['100644', 'x', blob('x\n')]])],
      ]),
    );
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toContain('6 published run(s) — 1 new, 0 updated, 5 not imported');
    expect(fetched.stderr).toContain('not imported: "not-a-run": not a run name');
    expect(fetched.stderr).toContain('not imported: "deep/26-03-01_1000__x__abcdef": not a run name');
    expect(fetched.stderr).toContain(`not imported: "${other}": its meta.yaml names another run`);
    expect(fetched.stderr).toMatch(new RegExp(`not imported: "${broken}": .*state.json`));
    expect(fetched.stderr).toContain(`not imported: "${clash}": its files could not be written`);
    // Nothing outside the run folder; no symlink inside it.
    const dir = path.join(laptop.ledger.runsDir, real.name);
    const everywhere = execFileSync(
      'find',
      [path.dirname(laptop.repo.dir), sentinel, '-name', 'escaped.txt'],
      { encoding: 'utf8' },
    );
    expect(everywhere).toBe('');
    expect(fs.existsSync(path.join(dir, 'link'))).toBe(false);
    expect(fs.readdirSync(laptop.ledger.runsDir)).toEqual([real.name]);
    // This machine's pid, folder and mark are not taken from it.
    expect(readState(dir)).toMatchObject({
      pid: null,
      worktree_path: null,
      launch_dir: null,
      process_mark: null,
      socket_path: null,
    });
    // The gate holds: what it claims is refused with --yes, the sensitive change with --force too,
    // and discard leaves the folder it named.
    const claimed = await laptop.agentbox(['merge', real.id, '--yes']);
    expect(claimed.code).toBe(1);
    expect(claimed.stderr).toContain('its publication claims REVIEW');
    const merge = await laptop.agentbox(['merge', real.id, '--yes', '--force']);
    expect(merge.code).toBe(1);
    expect(merge.stderr).toContain('sensitive change');
    expect(fs.existsSync(path.join(laptop.repo.dir, '.claude/settings.json'))).toBe(false);
    expect((await laptop.agentbox(['discard', real.id])).code).toBe(0);
    expect(fs.existsSync(sentinel)).toBe(true);
  });
});
