import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listGroupNames } from '../../src/group/store.js';
import { readState } from '../../src/ledger/index.js';
import { parseMeta, serializeMeta } from '../../src/ledger/meta.js';
import { candidateNames } from '../../src/remote/imported.js';
import { tempDir } from '../helpers/git-repo.js';
import { type Entry, events, fixGroup, fixRun, forge, lines, sha256 } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * A hostile remote (issue 37, part 4): anyone who can push to it writes any publication — refs to
 * anything, trees of any shape, names the file system cannot take, thousands of files, a status it
 * never had here, escape sequences in who and where. Each publication is made with git's plumbing
 * (no agentbox), pushed to a real bare remote, and fetched by a laptop in-process.
 */

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

describe('a hostile remote cannot rewrite what this machine recorded', () => {
  it('an update that cannot be written whole (a name too long for the file system) changes nothing: patch, state and this machine’s refusals stay', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'gate');
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    // This machine refuses twice, and logs it in the run's events.jsonl.
    expect((await laptop.agentbox(['merge', run.id, '--yes'])).code).toBe(1);
    expect((await laptop.agentbox(['rerun', run.id])).code).toBe(2);
    const dir = path.join(laptop.ledger.runsDir, run.name);
    const log = path.join(dir, 'events.jsonl');
    expect(events(log)).toEqual(['Stop', 'merge_refused', 'rerun_refused']);
    const patch = sha256(path.join(dir, 'changes.patch'));
    const state = fs.readFileSync(path.join(dir, 'state.json'), 'utf8');
    // A new patch and a clean log, with one file whose name (400 bytes) no file system takes.
    const f = forge(attacker.repo);
    f.publish(run.name, [
      ...f.runEntries(run.dir, {
        'changes.patch': fs.readFileSync(path.join(run.dir, 'changes.patch'), 'utf8').replace('gate', 'evil'),
        'events.jsonl': '{"event":"Stop"}\n',
      }),
      ['100644', 'é'.repeat(200), f.blob('x')],
    ]);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stderr).toContain(`not imported: "${run.name}": its files could not be written`);
    expect(sha256(path.join(dir, 'changes.patch'))).toBe(patch);
    expect(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')).toBe(state);
    expect(events(log)).toEqual(['Stop', 'merge_refused', 'rerun_refused']);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.fetch-'))).toEqual([]);
  });

  it('an update written whole keeps every record this machine appended, once, after the publication’s own', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'kept');
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    await laptop.agentbox(['fetch']);
    await laptop.agentbox(['rerun', run.id]);
    await laptop.agentbox(['merge', run.id, '--yes']);
    const log = path.join(laptop.ledger.runsDir, run.name, 'events.jsonl');
    const mine = lines(log).slice(1);
    const f = forge(attacker.repo);
    for (const said of ['{"event":"Stop"}\n{"event":"verify","ok":true}\n', '{"event":"Stop"}']) {
      f.publish(run.name, f.runEntries(run.dir, { 'events.jsonl': said }));
      expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 updated');
      expect(lines(log)).toEqual([...said.trim().split('\n'), ...mine]);
    }
  });

  it('a status of MERGED a publication claims is not a decision made here: later publications still come in; one made here stays', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'said merged');
    const f = forge(attacker.repo);
    const state = JSON.parse(fs.readFileSync(path.join(run.dir, 'state.json'), 'utf8'));
    f.publish(
      run.name,
      f.runEntries(run.dir, { 'state.json': JSON.stringify({ ...state, status: 'MERGED' }) }),
    );
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    // Shown as the claim it is: marked in status (its JSON says so), as a REVIEW it claimed would be.
    const row = async () => {
      const json = JSON.parse((await laptop.agentbox(['status', '--all', '--json'])).stdout);
      const text = (await laptop.agentbox(['status', '--all'])).stdout;
      return { json: json.runs[0].status_claimed ?? false, text: text.split('\n')[1]!.split(/\s+/)[2] };
    };
    expect(await row()).toEqual({ json: true, text: 'MERGED*' });
    const dir = path.join(laptop.ledger.runsDir, run.name);
    f.publish(run.name, f.runEntries(run.dir, { 'report.md': 'second\n' }));
    const second = await laptop.agentbox(['fetch']);
    expect(second.stdout).toContain('0 new, 1 updated');
    expect(second.stdout).not.toContain('already decided here');
    expect(readState(dir)?.status).toBe('REVIEW');
    // Merged here: that decision stays whatever comes next.
    expect((await laptop.agentbox(['merge', run.id, '--yes', '--force'])).code).toBe(0);
    f.publish(run.name, f.runEntries(run.dir, { 'report.md': 'third\n' }));
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 already decided here');
    expect(readState(dir)?.status).toBe('MERGED');
    expect(await row()).toEqual({ json: false, text: 'MERGED' });
  });
});

describe('a group a hostile remote publishes comes whole or not at all', () => {
  it('a group whose publication says MERGED is not decided here: its next publication still comes in', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const { group } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
    const stateFile = path.join(group.dir, 'state.json');
    const ended = fs.readFileSync(stateFile, 'utf8');
    fs.writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(ended), status: 'MERGED' }));
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    fs.writeFileSync(stateFile, ended);
    fs.writeFileSync(path.join(group.dir, 'report.md'), '# ranking, again\n');
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    const again = await laptop.agentbox(['fetch']);
    expect(again.stdout).toContain('1 published group(s) — 0 new, 1 updated');
    expect(
      listGroupNames(laptop.ledger).map((g) =>
        fs.readFileSync(path.join(laptop.ledger.dir, 'groups', g, 'report.md'), 'utf8'),
      ),
    ).toEqual(['# ranking, again\n']);
  });

  it('an attempt that cannot be imported (every name it could take is in use here) leaves none of its siblings behind', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const { group, runs } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    // Every name attempt 2 could take here is one of this machine's.
    const mine = candidateNames(runs[1]!.name, 'origin');
    for (const name of mine) fs.mkdirSync(path.join(laptop.ledger.runsDir, name));
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.stderr).toContain(
      `group not imported: "${group.name}": attempt 2 (${runs[1]!.name}): every name it could take here is in use`,
    );
    expect(listGroupNames(laptop.ledger)).toEqual([]);
    expect(laptop.runs()).toEqual([...mine].sort());
    const status = await laptop.agentbox(['status', '--json']);
    expect(JSON.parse(status.stdout).runs.map((r: { name: string }) => r.name)).not.toContain(runs[0]!.name);
  });
});

describe('nothing a remote publishes is written outside the ledger', () => {
  it('a ledger whose groups/ or remotes/ folder is a link: fetch refuses before it writes anything', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const { group } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    forge(attacker.repo).push(forge(attacker.repo).blob('x'), 'refs/agentbox/runs/not-a-run');
    for (const folder of ['groups', 'remotes']) {
      const elsewhere = tempDir('agentbox-elsewhere-');
      const link = path.join(laptop.ledger.dir, folder);
      fs.rmSync(link, { recursive: true, force: true });
      fs.symlinkSync(elsewhere, link);
      const fetched = await laptop.agentbox(['fetch']);
      expect(fetched.code).not.toBe(0);
      expect(fetched.stderr).toContain(`.agents/${folder} → ${elsewhere} is a symbolic link`);
      expect(fs.readdirSync(elsewhere)).toEqual([]);
      expect(laptop.runs()).toEqual([]);
      fs.unlinkSync(link);
    }
  });
});

describe('what a publication says is never an option to git', () => {
  it('a start commit that is a git option (a run’s meta.yaml, a group’s group.json): diff writes nothing where it names', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const outside = tempDir('agentbox-outside-');
    // A run whose start commit is read-tree's --index-output: git wrote its index there.
    const run = await fixRun(attacker.repo, attacker.ledger, 'option');
    const metaFile = path.join(run.dir, 'meta.yaml');
    const meta = parseMeta(fs.readFileSync(metaFile, 'utf8'), metaFile);
    fs.writeFileSync(metaFile, serializeMeta({ ...meta, repo_sha_start: `--index-output=${outside}/index` }));
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    // A group whose start commit is git diff's --output, and whose attempt 1 changed nothing: the
    // comparison of its attempts wrote the diff over the file it named.
    const { group, runs } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
    fs.writeFileSync(path.join(runs[0]!.dir, 'changes.patch'), '');
    const groupFile = path.join(group.dir, 'group.json');
    const groupJson = JSON.parse(fs.readFileSync(groupFile, 'utf8'));
    fs.writeFileSync(
      groupFile,
      JSON.stringify({ ...groupJson, repo_sha_start: `--output=${outside}/bashrc` }),
    );
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    const diffs = [
      await laptop.agentbox(['diff', run.id, '--no-pager']),
      await laptop.agentbox(['diff', group.meta.group_id, '--attempts', '1,2', '--no-pager']),
    ];
    expect(fs.readdirSync(outside)).toEqual([]);
    for (const d of diffs) expect(d.code).not.toBe(0);
  });
});

describe('a hostile remote’s resources are bounded', () => {
  it('a publication of more files than a ledger entry holds is refused, named and logged; nothing is written', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'many files');
    const f = forge(attacker.repo);
    const empty = f.blob('');
    const many: Entry[] = Array.from({ length: 5000 }, (_, i) => ['100644', `f${i}`, empty]);
    f.publish(run.name, [...f.runEntries(run.dir), ['40000', 'artifacts', f.tree(many)]]);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code).toBe(0);
    expect(fetched.stderr).toContain(`not imported: "${run.name}": it holds more than 1000 files`);
    expect(laptop.runs()).toEqual([]);
    const refusals = lines(path.join(laptop.ledger.dir, 'remotes', 'events.jsonl')).map((l) => JSON.parse(l));
    expect(refusals).toMatchObject([{ event: 'fetch_refused', kind: 'run', name: run.name }]);
  });
});

/** Every control character a terminal obeys: C0 (but line end and tab), DEL, C1, bidi controls. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('what a hostile remote wrote reaches no terminal raw', () => {
  it('escape sequences and a bidi override in who pushed, where it ran and its ref names: fetch, status, show and the merge prompt', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const evil = '\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u009b31m\u202e';
    const run = await fixRun(attacker.repo, attacker.ledger, 'plain task');
    const f = forge(attacker.repo);
    const t = f.tree([
      ...f.runEntries(run.dir),
      ['100644', 'publication.json', f.blob(JSON.stringify({ host: `ci-${evil}-7` }))],
    ]);
    const who = {
      GIT_AUTHOR_NAME: `Mal${evil}lory`,
      GIT_AUTHOR_EMAIL: `m${evil}@x`,
      GIT_COMMITTER_NAME: `C${evil}`,
    };
    const commit = f.commit(t, { ...process.env, ...who, GIT_COMMITTER_EMAIL: 'c@x' });
    f.push(commit, `refs/agentbox/runs/${run.name}`);
    f.push(commit, `refs/agentbox/runs/26-03-01_1000__x__abc\u202e`);
    f.push(commit, `refs/agentbox/groups/26-03-01_1000__y__abc\u009b`);
    const outputs = {
      fetch: await laptop.agentbox(['fetch']),
      status: await laptop.agentbox(['status']),
      show: await laptop.agentbox(['show', run.id]),
      merge: await laptop.agentbox(['merge', run.id], ['n']),
    };
    for (const [command, out] of Object.entries(outputs)) {
      const text = out.stdout + out.stderr;
      expect({ command, raw: CONTROL.exec(text)?.[0] }).toEqual({ command, raw: undefined });
    }
    expect(outputs.fetch.stderr).toContain('not imported: "26-03-01_1000__x__abc\\u202e": not a run name');
    expect(outputs.merge.stdout).toMatch(
      /Apply these changes \(ci-.*\\u202e-7 claims REVIEW, not checked here\)/,
    );
  });
});
