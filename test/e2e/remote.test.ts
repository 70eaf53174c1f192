import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun, openLedger, updateState } from '../../src/ledger/index.js';
import { type ModelServer, text, tool } from '../fixtures/model-server/index.js';
import { type Machines, machines } from '../helpers/machines.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import type { Origin } from '../helpers/remote.js';

/*
 * Runs beyond one machine (issue 17): a bare repository plays the team's `origin`; clones of it
 * play CI runners (CI=true, no TTY, the real Claude Code against the scripted model) and a
 * person's laptop, which fetches, reviews and merges what the runners published.
 */

const FILES = { 'src/app.ts': 'export const x = 1;\n' };

describe('agentbox fix --push on a CI runner, agentbox fetch on a laptop', () => {
  let m: Machines;
  let world: Origin;
  let server: ModelServer;
  let tag: string;
  let machine: Machines['machine'];

  beforeAll(async () => {
    m = await machines(FILES);
    ({ world, server, tag, machine } = m);
  });
  afterAll(async () => m?.cleanup());

  it('a fix run published while it runs and when it ends is fetched, diffed and merged on the laptop', async () => {
    const runner = await machine('runner', { CI: 'true' });
    // The team committed `agentbox init`: every clone has the same settings.
    runner.repo.commit('agentbox init');
    runner.repo.git('push', '--quiet', 'origin', 'main');
    const laptop = await machine('laptop');
    laptop.repo.git('pull', '--quiet', '--ff-only');
    const task = 'make x 42';
    const file = (req: { workingDirectory?: string | undefined }) =>
      path.join(req.workingDirectory!, 'src/app.ts');
    server.setRules([
      { when: { turn: 0, anyText: task }, reply: (req) => tool('Read', { file_path: file(req) }) },
      {
        when: { turn: 1, anyText: task },
        // Slow enough for the laptop to fetch the run while it runs.
        reply: (req) => ({
          ...tool('Edit', { file_path: file(req), old_string: 'x = 1', new_string: 'x = 42' }),
          delayMs: 6000,
        }),
      },
      { when: { turn: 2, anyText: task }, reply: () => text('x is 42 now.') },
    ]);

    const fix = runner.run(['fix', task, '--supervisor', 'rules', '--push']);
    const name = await waitFor(() => runner.runs().find((n) => runner.state(n).status === 'ACTIVE'));
    await waitFor(() => (server.requests.length >= 2 ? true : undefined));
    const early = await runner.run(['push', name]);
    expect(early.stderr).toBe('');
    expect(early.code).toBe(0);
    const during = await laptop.run(['fetch']);
    expect(during.stdout).toContain('1 new');
    expect(laptop.state(name)).toMatchObject({ status: 'ACTIVE', pid: null, worktree_path: null });
    const notYet = await laptop.run(['merge', name, '--yes']);
    expect(notYet.stderr).toContain('is still running on runner.ci');

    const done = await fix;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`published ${name} to origin with its branch agentbox/${name}`);
    expect(world.git('rev-parse', '--verify', `refs/heads/agentbox/${name}`)).toMatch(/^[0-9a-f]{40}/);

    const after = await laptop.run(['fetch']);
    expect(after.stdout).toContain('0 new, 1 updated');
    expect(laptop.state(name).status).toBe('REVIEW');
    const status = await laptop.run(['status']);
    expect(status.stdout).toMatch(new RegExp(`${name.slice(-6)} +fix +REVIEW`));
    const show = await laptop.run(['show', name.slice(-6)]);
    expect(show.stdout).toMatch(/ran on +runner\.ci — fetched from origin/);
    expect(show.stdout).toContain('x is 42 now.');
    const diff = await laptop.run(['diff', name.slice(-6), '--no-pager']);
    expect(diff.stdout).toContain('+export const x = 42;');
    // What it claims was not checked here (no runs.verify to run it with): --yes alone is refused.
    const claimed = await laptop.run(['merge', name.slice(-6), '--yes']);
    expect(claimed.code).toBe(1);
    expect(claimed.stderr).toContain('its publication claims REVIEW');
    const merged = await laptop.run(['merge', name.slice(-6), '--yes', '--force']);
    expect(merged.stderr).toBe('');
    expect(merged.code).toBe(0);
    expect(merged.stdout).toMatch(/patch sha256 [0-9a-f]{64}/);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 42;\n');
    // Fetching again changes nothing, and the merge stands.
    expect((await laptop.run(['fetch'])).stdout).toContain('0 new, 0 updated');
    expect(laptop.state(name).status).toBe('MERGED');
    await expectNoProcessesLeft(tag);
  });

  it('five runners publish at once into one origin; the laptop fetches all five', async () => {
    const laptop = await machine('laptop5');
    const runners = await Promise.all([1, 2, 3, 4, 5].map((i) => machine(`r${i}`)));
    // Each runner has a finished scout run of its own, made directly in its ledger: what is under
    // test is five pushes into one origin at the same moment, not five claudes on two cores.
    for (const [i, r] of runners.entries()) {
      const run = await createRun(openLedger(r.repo.dir), {
        type: 'scout',
        task: `question ${i}`,
        envelope: { model: null, tools_allowlist: [], safe_commands: [], human_only_commands: [] },
        repoShaStart: null,
      });
      await updateState(openLedger(r.repo.dir), run, { status: 'DONE' });
      fs.writeFileSync(path.join(run.dir, 'report.md'), `answer ${i}\n`);
    }
    const pushes = await Promise.all(runners.map((r) => r.run(['push', 'latest'])));
    for (const p of pushes) {
      expect(p.stderr).toBe('');
      expect(p.code).toBe(0);
    }
    const published = world
      .git('for-each-ref', '--format=%(refname)', 'refs/agentbox/runs/')
      .split('\n')
      .filter(Boolean);
    const names = runners.map((r) => r.runs()[0]!);
    for (const n of names) expect(published).toContain(`refs/agentbox/runs/${n}`);
    const fetched = await laptop.run(['fetch', '--json']);
    const result = JSON.parse(fetched.stdout);
    expect(result.imported).toEqual(expect.arrayContaining(names));
    const status = JSON.parse((await laptop.run(['status', '--json', '--all'])).stdout);
    expect(status.runs.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(names));
    await expectNoProcessesLeft(tag);
  });
});

async function waitFor<T>(probe: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
