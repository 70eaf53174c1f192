import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { updateState } from '../../src/ledger/index.js';
import { fixGroup, fixRun, forge } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * Routes a hostile remote tried that held on the code they were tried on (issue 37, part 4), kept
 * where no other test covers them: refs to what is not a commit, links and gitlinks in a tree, one
 * run name on two remotes, and merge --yes of a fetched group.
 */

let world: Origin | undefined;
const others: Origin[] = [];
afterEach(() => {
  world?.cleanup();
  world = undefined;
  for (const o of others.splice(0)) o.cleanup();
});

describe('routes a hostile remote tried that hold', () => {
  it('merge --yes of a fetched group, or of its attempt by its own id, does not believe what the attempts claim', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const { group, runs } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
    // Attempt 2 says its runs.verify passed (attempt 1's failed): the group's best, by its claims.
    const output = { template: null, applied: false, violations: 0, corrections: 0 };
    for (const [k, run] of runs.entries())
      await updateState(attacker.ledger, run, { output: { ...output, verified: k === 1 } });
    expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
    await laptop.agentbox(['fetch']);
    for (const ref of [group.meta.group_id, runs[1]!.id]) {
      const merged = await laptop.agentbox(['merge', ref, '--yes']);
      expect(merged.code).toBe(1);
      expect(merged.stderr).toContain('its publication claims REVIEW · verify passed');
      expect(merged.stderr).toContain('it could not be checked here');
    }
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 0;\n');
  });

  it('refs to a blob, a tree or a tag; a symbolic link and a gitlink in a tree; one name on two remotes', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const upstream = origin({ 'src/app.ts': 'export const x = 1;\n' });
    others.push(upstream);
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    laptop.repo.git('remote', 'add', 'upstream', upstream.dir);
    const run = await fixRun(attacker.repo, attacker.ledger, 'one name');
    const f = forge(attacker.repo);
    const head = attacker.repo.git('rev-parse', 'HEAD').trim();
    const t = f.tree([
      ...f.runEntries(run.dir),
      ['120000', 'report.txt', f.blob('/etc/passwd')],
      ['160000', 'module', head],
    ]);
    f.push(f.blob('x'), 'refs/agentbox/runs/26-03-01_1000__blob__aaaaaa');
    f.push(t, 'refs/agentbox/runs/26-03-01_1000__tree__bbbbbb');
    f.g('', ['tag', '-a', '-m', 'x', 'evtag', f.commit(t)]);
    f.push('evtag', 'refs/agentbox/runs/26-03-01_1000__tag__cccccc');
    f.push(f.commit(t), `refs/agentbox/runs/${run.name}`);
    // The same run name, another publication, on another remote.
    f.g('', [
      'push',
      '--quiet',
      upstream.dir,
      `${f.commit(f.tree(f.runEntries(run.dir, { 'report.md': 'B\n' })))}:refs/agentbox/runs/${run.name}`,
    ]);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toContain('4 published run(s) — 1 new, 0 updated, 3 not imported');
    for (const bad of ['blob__aaaaaa', 'tree__bbbbbb', 'tag__cccccc'])
      expect(fetched.stderr).toContain(
        `not imported: "26-03-01_1000__${bad}": it has no meta.yaml or state.json`,
      );
    const dir = path.join(laptop.ledger.runsDir, run.name);
    expect(fs.readdirSync(dir)).not.toContain('report.txt');
    expect(fs.readdirSync(dir)).not.toContain('module');
    expect((await laptop.agentbox(['fetch', 'upstream'])).stdout).toContain('1 new');
    const [mine, theirs] = [
      laptop.runs().filter((n) => n !== run.name),
      fs.readFileSync(path.join(dir, 'report.md'), 'utf8'),
    ];
    expect(mine).toHaveLength(1);
    expect(theirs).toBe('# one name\ndone\n');
    expect(fs.readFileSync(path.join(laptop.ledger.runsDir, mine[0]!, 'report.md'), 'utf8')).toBe('B\n');
    // Each fetch again finds each in its own place.
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('0 new, 0 updated');
    expect((await laptop.agentbox(['fetch', 'upstream'])).stdout).toContain('0 new, 0 updated');
    expect(fs.readFileSync(path.join(dir, 'report.md'), 'utf8')).toBe('# one name\ndone\n');
  });
});
