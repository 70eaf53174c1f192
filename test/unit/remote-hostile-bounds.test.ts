import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMeta, serializeMeta } from '../../src/ledger/meta.js';
import { type Entry, fixRun, forge, lines } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * A hostile remote's resources are bounded (issue 37, part 4): what one fetch holds in memory,
 * how often a refused publication is read and logged, and what push sends (the same bound as fetch).
 */

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

describe('a hostile remote’s resources are bounded: memory', () => {
  // NOTE: 160 MB of git objects (zeros: a few KB on the wire) pushed and fetched, ~8 s.
  it('runs of 40 MB each are read a round at a time, never all at once', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    runner.repo.git('config', 'core.bigFileThreshold', '1m'); // no delta search among big blobs
    for (const k of [1, 2, 3, 4]) {
      const run = await fixRun(runner.repo, runner.ledger, `big ${k}`);
      const big = Buffer.alloc(40 * 1024 * 1024);
      big.write(`run ${k}`);
      fs.mkdirSync(path.join(run.dir, 'artifacts'));
      fs.writeFileSync(path.join(run.dir, 'artifacts', 'big.bin'), big);
      expect((await runner.agentbox(['push', run.id])).code).toBe(0);
    }
    let peak = 0;
    const sample = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 1);
    const fetched = await laptop.agentbox(['fetch']).finally(() => clearInterval(sample));
    expect(fetched.stdout).toContain('4 new');
    // All at once, the 160 MB were held twice (git's output, then joined): 390 MB measured.
    expect(peak).toBeLessThan(256 * 1024 * 1024);
  }, 30_000);
});

describe('a hostile remote’s resources are bounded: file lists', () => {
  it('200 runs of one tree of 5,000 files are listed once, and no list is read past what 1,000 files take', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'wide');
    const f = forge(attacker.repo);
    const empty = f.blob('');
    const wide = f.tree(Array.from({ length: 5000 }, (_, i): Entry => ['100644', `f${i}`, empty]));
    const junk = f.commit(f.tree([...f.runEntries(run.dir), ['40000', 'artifacts', wide]]));
    const names = Array.from(
      { length: 200 },
      (_, i) => `26-03-01_1000__wide__${(0xb00000 + i).toString(16)}`,
    );
    f.g(names.map((n) => `create refs/agentbox/runs/${n} ${junk}\n`).join(''), ['update-ref', '--stdin']);
    f.g('', ['push', '--quiet', 'origin', 'refs/agentbox/runs/*:refs/agentbox/runs/*']);
    let peak = 0;
    const sample = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 1);
    const before = process.memoryUsage().arrayBuffers;
    const fetched = await laptop.agentbox(['fetch']).finally(() => clearInterval(sample));
    expect(fetched.stdout).toContain('200 published run(s) — 0 new, 0 updated, 200 not imported');
    expect(fetched.stderr).toContain(`not imported: "${names[0]}": it holds more than 1000 files`);
    // The one tree listed 200 times was 200 × 5,000 lines at once: 220 MB measured.
    expect(peak - before).toBeLessThan(32 * 1024 * 1024);
  }, 30_000);
});

describe('a hostile remote’s resources are bounded: refusals', () => {
  it('a publication refused for what it holds is refused once: an unchanged one is neither read nor logged again; a changed one is', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'junk');
    const f = forge(attacker.repo);
    const junk = f.commit(f.tree(f.runEntries(run.dir, { 'meta.yaml': 'not: [yaml' })));
    // 300 refs to one refused publication (each a valid run name), and one that is not a run name.
    const input = Array.from(
      { length: 300 },
      (_, i) => `create refs/agentbox/runs/26-03-01_1000__junk__${i.toString(16).padStart(6, '0')} ${junk}\n`,
    ).join('');
    f.g(input, ['update-ref', '--stdin']);
    f.g('', ['update-ref', 'refs/agentbox/runs/not-a-run', junk]);
    f.g('', ['push', '--quiet', 'origin', 'refs/agentbox/runs/*:refs/agentbox/runs/*']);
    const log = path.join(laptop.ledger.dir, 'remotes', 'events.jsonl');
    const first = await laptop.agentbox(['fetch']);
    expect(first.stdout).toContain('301 published run(s) — 0 new, 0 updated, 301 not imported\n');
    expect(lines(log)).toHaveLength(301);
    const again = await laptop.agentbox(['fetch']);
    expect(again.stdout).toBe(
      'origin: 301 published run(s) — 0 new, 0 updated, 301 refused before and unchanged\n',
    );
    expect(again.stderr).toBe('');
    expect(lines(log)).toHaveLength(301);
    // The publication changes: it is read again (and is a run now).
    const name = '26-03-01_1000__junk__0000a0';
    const metaFile = path.join(run.dir, 'meta.yaml');
    const meta = parseMeta(fs.readFileSync(metaFile, 'utf8'), metaFile);
    f.publish(
      name,
      f.runEntries(run.dir, { 'meta.yaml': serializeMeta({ ...meta, run_name: name, run_id: '0000a0' }) }),
    );
    expect((await laptop.agentbox(['fetch'])).stdout).toContain(
      '1 new, 0 updated, 300 refused before and unchanged',
    );
  });
});

describe('a hostile remote’s resources are bounded: group refusals', () => {
  it('a group publication refused for what it holds is refused once, until it changes', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const f = forge(attacker.repo);
    // A group ref naming a blob, and 50 commits of a group's tree with no group.json.
    f.push(f.blob('x'), 'refs/agentbox/groups/26-03-01_1000__blob__aaaaaa');
    const bare = f.commit(f.tree([['100644', 'report.md', f.blob('# ranking\n')]]));
    const names = Array.from({ length: 50 }, (_, i) => `26-03-01_1000__bare__${(0xc00000 + i).toString(16)}`);
    f.g(names.map((n) => `create refs/agentbox/groups/${n} ${bare}\n`).join(''), ['update-ref', '--stdin']);
    f.g('', ['push', '--quiet', 'origin', 'refs/agentbox/groups/*:refs/agentbox/groups/*']);
    const log = path.join(laptop.ledger.dir, 'remotes', 'events.jsonl');
    const first = await laptop.agentbox(['fetch']);
    expect(first.stdout).toContain('51 published group(s) — 0 new, 0 updated, 51 not imported');
    expect(lines(log)).toHaveLength(51);
    const again = await laptop.agentbox(['fetch']);
    expect(again.stdout).toContain(
      '51 published group(s) — 0 new, 0 updated, 51 refused before and unchanged',
    );
    expect(again.stderr).toBe('');
    expect(lines(log)).toHaveLength(51);
  });
});

describe('a hostile remote’s resources are bounded, where it is pushed too', () => {
  it('push refuses a run of more files than a fetch takes, and says so', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const run = await fixRun(runner.repo, runner.ledger, 'too many');
    fs.mkdirSync(path.join(run.dir, 'artifacts'));
    for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(run.dir, 'artifacts', `a${i}`), '');
    const pushed = await runner.agentbox(['push', run.id]);
    expect(pushed.code).toBe(2);
    expect(pushed.stderr).toContain(
      `run ${run.name} has 1005 files to publish: a publication holds at most 1000`,
    );
    expect(world.git('for-each-ref', 'refs/agentbox/')).toBe('');
  });
});
