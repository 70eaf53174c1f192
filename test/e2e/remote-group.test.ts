import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelServer } from '../fixtures/model-server/index.js';
import { attemptRules, GROUP_FILES } from '../helpers/group.js';
import { type Machines, machines } from '../helpers/machines.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import type { Origin } from '../helpers/remote.js';

/*
 * A group beyond one machine (issue 31): a CI runner (CI=true, no TTY, the real Claude Code against
 * the scripted model) runs `fix --attempts 2 --push`; the group is published whole, and a laptop's
 * `agentbox fetch` brings it back whole. A hand-made partial group beside it is refused, and logged.
 */

describe('agentbox fix --attempts 2 --push on a CI runner, agentbox fetch on a laptop', () => {
  let m: Machines;
  let world: Origin;
  let server: ModelServer;
  let tag: string;
  let machine: Machines['machine'];

  beforeAll(async () => {
    m = await machines(GROUP_FILES, { trust: true, timeoutMs: 120_000 });
    ({ world, server, tag, machine } = m);
  });
  afterAll(async () => m?.cleanup());

  it('the group travels whole: status, show and merge on the laptop see both attempts and their patches', async () => {
    const runner = await machine('runner', { CI: 'true' });
    runner.repo.commit('agentbox init');
    runner.repo.git('push', '--quiet', 'origin', 'main');
    const laptop = await machine('laptop');
    laptop.repo.git('pull', '--quiet', '--ff-only');
    const task = 'TASK-REMOTE-GROUP set x';
    // The attempts differ: attempt 1 passes runs.verify, attempt 2 breaks the output contract.
    server.setRules(attemptRules(task, ['pass', 'violate']));

    const fix = await runner.run(['fix', task, '--attempts', '2', '--supervisor', 'rules', '--push']);
    expect(fix.code, fix.stderr + fix.stdout).toBe(0);
    const group = /published group (\S+) to origin with its 2 attempt\(s\)/.exec(fix.stdout)?.[1];
    expect(group).toBeDefined();
    const published = world.git('for-each-ref', '--format=%(refname)').split('\n');
    expect(published).toContain(`refs/agentbox/groups/${group}`);
    expect(published.filter((r) => r.startsWith('refs/agentbox/runs/'))).toHaveLength(2);
    expect(published.filter((r) => r.startsWith('refs/heads/agentbox/'))).toHaveLength(2);

    // Beside it, a group bent by hand: attempt 2 left out of its publication.
    const g = (input: string, ...args: string[]) =>
      execFileSync('git', args, { cwd: runner.repo.dir, input, encoding: 'utf8' }).trim();
    const bent = '26-03-01_1000__bent__b0b0b0';
    const groupDir = path.join(runner.repo.dir, '.agents/groups', group!);
    const state = JSON.parse(fs.readFileSync(path.join(groupDir, 'state.json'), 'utf8'));
    const meta = JSON.parse(fs.readFileSync(path.join(groupDir, 'group.json'), 'utf8'));
    const manifest = JSON.parse(g('', 'show', `refs/agentbox/groups/${group}:publication.json`));
    const blob = (t: string) => g(t, 'hash-object', '-w', '--stdin');
    const tree = g(
      [
        `100644 blob ${blob(JSON.stringify({ ...meta, group_name: bent, group_id: 'b0b0b0' }))}\tgroup.json`,
        `100644 blob ${blob(JSON.stringify(state))}\tstate.json`,
        `100644 blob ${blob(JSON.stringify({ ...manifest, attempts: manifest.attempts.slice(0, 1) }))}\tpublication.json`,
        '',
      ].join('\n'),
      'mktree',
    );
    const commit = g('bent\n', 'commit-tree', tree, '-p', manifest.attempts[0].commit, '-F', '-');
    g('', 'push', '--quiet', 'origin', `${commit}:refs/agentbox/groups/${bent}`);

    const fetched = await laptop.run(['fetch']);
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toContain('origin: 2 published run(s) — 2 new, 0 updated');
    expect(fetched.stdout).toContain('origin: 2 published group(s) — 1 new, 0 updated, 1 not imported');
    expect(fetched.stderr).toContain(
      `group not imported: "${bent}": attempt 2 (${state.members[1].run}) is not in the publication: a partial group is not imported`,
    );
    const log = fs.readFileSync(path.join(laptop.repo.dir, '.agents/remotes/events.jsonl'), 'utf8');
    expect(log).toContain(`"event":"fetch_refused","remote":"origin","kind":"group","name":"${bent}"`);
    expect(fs.readdirSync(path.join(laptop.repo.dir, '.agents/groups'))).toEqual([group]);

    // status: one row for the group, its attempts in it; show: the group ranked, both attempts.
    const id = group!.slice(-6);
    const status = await laptop.run(['status']);
    // A fetched group's status and cost are its publication's claims, marked as a run's are, with
    // where it ran.
    expect(status.stdout).toMatch(
      new RegExp(`${id}\\s+group\\s+REVIEW\\*\\s.*\\*\\s+runner\\.ci\\s+fix ×2 · 1 passed`),
    );
    for (const m of state.members) expect(status.stdout).not.toContain(m.run.slice(-6));
    const show = await laptop.run(['show', id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('  type        fix ×2 (a group: agentbox fix --attempts 2)\n');
    expect(show.stdout).toContain('ranking — 1st: attempt 1');
    for (const m of state.members) expect(show.stdout).toContain(m.run.slice(-6));
    for (const m of state.members) {
      const one = await laptop.run(['show', m.run.slice(-6)]);
      expect(one.stdout).toMatch(/ran on +runner\.ci — fetched from origin/);
    }
    const patches = path.join(laptop.repo.dir, '.agents/groups', group!, 'patches');
    for (const k of [1, 2])
      expect(fs.readFileSync(path.join(patches, `agent_${k}.patch`), 'utf8')).toContain(
        '+export const x = 42;',
      );
    const here = JSON.parse(fs.readFileSync(path.join(patches, '..', 'state.json'), 'utf8'));
    expect(here).toMatchObject({ status: 'ENDED', pid: null });
    expect((await laptop.run(['fetch'])).stdout).toContain('2 published group(s) — 0 new, 0 updated');
    // Merged here, through the one gate: the attempt that passed, its patch as it was published.
    // Its attempts' verdicts are claims (no runs.verify here to check them with): --force takes them.
    const merged = await laptop.run(['merge', id, '--yes', '--force']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 42;\n');
    expect(JSON.parse(fs.readFileSync(path.join(patches, '..', 'state.json'), 'utf8'))).toMatchObject({
      status: 'MERGED',
      merged: { attempt: 1, run: state.members[0].run },
    });
    await expectNoProcessesLeft(tag);
  });
});
