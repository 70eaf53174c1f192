import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/index.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { fixRun } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * The ledger's pointers after a fetch (last-review, last-fail, last-done): the run that reached the
 * status last, here or where it ran — not the newest of one fetch whatever the person's own runs.
 */

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

/** A REVIEW fix run (test/helpers/hostile-remote.ts); `endedAt` rewrites when its state says it ended. */
async function reviewRun(repo: TestRepo, ledger: Ledger, task: string, endedAt?: string) {
  const run = await fixRun(repo, ledger, task);
  if (endedAt) {
    const file = path.join(run.dir, 'state.json');
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...state, ended_at: endedAt, updated_at: endedAt }));
  }
  return run;
}

const pointer = (ledger: Ledger, name: string) =>
  path.basename(fs.readlinkSync(path.join(ledger.pointersDir, name)));

describe('pointers after a fetch', () => {
  it('a fetched run that ended before the person’s own leaves last-review alone; one that ended after takes it', async () => {
    world = origin({ 'a.txt': 'a\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const old = await reviewRun(runner.repo, runner.ledger, 'old work', '2026-03-01T10:05:00.000Z');
    expect((await runner.agentbox(['push', old.id])).code).toBe(0);
    const mine = await reviewRun(laptop.repo, laptop.ledger, 'my own');
    expect(pointer(laptop.ledger, 'last-review')).toBe(mine.name);

    const first = await laptop.agentbox(['fetch']);
    expect(first.stdout, first.stderr).toContain('1 new');
    expect(pointer(laptop.ledger, 'last-review')).toBe(mine.name);

    // Ended after the person's own (a claim, but not one past the fetch): it is the last review.
    const newer = await reviewRun(runner.repo, runner.ledger, 'new work');
    expect((await runner.agentbox(['push', newer.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    expect(pointer(laptop.ledger, 'last-review')).toBe(newer.name);

    // A claim of the far future counts as the fetch's time: the person's run that ends after it wins.
    const future = await reviewRun(runner.repo, runner.ledger, 'from the future', '2099-01-01T00:00:00.000Z');
    expect((await runner.agentbox(['push', future.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    expect(pointer(laptop.ledger, 'last-review')).toBe(future.name);
    // …and does not hold the pointer against what ends after that fetch.
    const next = await reviewRun(runner.repo, runner.ledger, 'next work');
    expect((await runner.agentbox(['push', next.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    expect(pointer(laptop.ledger, 'last-review')).toBe(next.name);
    const later = await reviewRun(laptop.repo, laptop.ledger, 'mine, later');
    expect(pointer(laptop.ledger, 'last-review')).toBe(later.name);
    const again = await reviewRun(runner.repo, runner.ledger, 'old again', '2026-03-02T10:05:00.000Z');
    expect((await runner.agentbox(['push', again.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).stdout).toContain('1 new');
    expect(pointer(laptop.ledger, 'last-review')).toBe(later.name);
  });
});
