import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRun, updateState } from '../../src/ledger/index.js';
import { trackedRun } from '../../src/remote/tracking.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * Issue 38 item 12: `agentbox fetch` names its refspecs on git's command line, and git then also
 * updates the remote-tracking refs the remote's own refspecs map the fetched run branches to
 * (`refs/remotes/origin/agentbox/<run>`). `uninstall --purge` removes those, and only those.
 */

const RUN = '26-03-01_1000__bump-x__a1b2c3';

describe('trackedRun: the run whose branch a local ref copies, under a remote’s fetch refspecs', () => {
  const standard = ['+refs/heads/*:refs/remotes/origin/*'];
  it.each<[string, string[], string, string | null]>([
    ['the default refspec', standard, `refs/remotes/origin/agentbox/${RUN}`, RUN],
    ['a branch of the person’s', standard, 'refs/remotes/origin/main', null],
    ['under agentbox/, not named after a run', standard, 'refs/remotes/origin/agentbox/notes', null],
    ['another remote’s folder', standard, `refs/remotes/upstream/agentbox/${RUN}`, null],
    ['a refspec of its own', ['+refs/heads/*:refs/mirror/o/*'], `refs/mirror/o/agentbox/${RUN}`, RUN],
    ['one branch named', [`refs/heads/agentbox/${RUN}:refs/remotes/o/x`], 'refs/remotes/o/x', RUN],
    [
      'left out by a negative refspec',
      [...standard, '^refs/heads/agentbox/*'],
      `refs/remotes/origin/agentbox/${RUN}`,
      null,
    ],
    ['a refspec without a destination', ['refs/heads/*'], `refs/heads/agentbox/${RUN}`, null],
  ])('%s', (_, refspecs, ref, run) => {
    expect(trackedRun(refspecs, ref)).toBe(run);
  });
});

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

describe('agentbox uninstall --purge after agentbox fetch', () => {
  it('removes the remote-tracking refs of run branches that fetch left; the person’s own stay', async () => {
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    // The person's own branches on the remote, one of them under agentbox/ but not a run's.
    runner.repo.git('push', '--quiet', 'origin', 'main:feature', 'main:agentbox/notes');
    const base = runner.repo.git('rev-parse', 'HEAD').trim();
    const run = await createRun(runner.ledger, {
      type: 'fix',
      task: 'bump x',
      envelope: ENVELOPE,
      repoShaStart: base,
      now: new Date('2026-03-01T10:00:00Z'),
    });
    fs.writeFileSync(path.join(run.dir, 'changes.patch'), '');
    runner.repo.git('branch', `agentbox/${run.name}`, base);
    await updateState(runner.ledger, run, { status: 'REVIEW', branch: `agentbox/${run.name}` });
    expect((await runner.agentbox(['push', run.id])).code).toBe(0);

    const laptop = machine(world, 'laptop');
    // A second remote agentbox never fetched from: what the person's own git fetch made there stays.
    laptop.repo.git('remote', 'add', 'upstream', world.dir);
    laptop.repo.git('fetch', '--quiet', 'upstream');
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code, fetched.stderr).toBe(0);
    const copy = `refs/remotes/origin/agentbox/${run.name}`;
    expect(laptop.refs()).toContain(copy);

    const purged = await laptop.agentbox(['uninstall', '--purge', '--force']);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toContain(`  tracking ${copy}\n`);
    expect(purged.stdout).toContain(`  removed tracking ${copy} (`);
    expect(purged.stdout).toContain(
      'removed 0 worktree(s), 0 branch(es), 3 ref(s), 1 remote-tracking ref(s) agentbox made',
    );
    expect(laptop.refs().sort()).toEqual([
      'refs/heads/main',
      'refs/remotes/origin/HEAD',
      'refs/remotes/origin/agentbox/notes',
      'refs/remotes/origin/feature',
      'refs/remotes/origin/main',
      `refs/remotes/upstream/agentbox/${run.name}`,
      'refs/remotes/upstream/agentbox/notes',
      'refs/remotes/upstream/feature',
      'refs/remotes/upstream/main',
    ]);
  });
});
