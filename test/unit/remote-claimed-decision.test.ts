import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { updateGroupState } from '../../src/group/store.js';
import { readState, updateState } from '../../src/ledger/index.js';
import { groupDetail } from '../../src/web/groups.js';
import { fixGroup, fixRun } from '../helpers/hostile-remote.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';

/*
 * A MERGED or DISCARDED that a fetched run's or group's publication claims was said on another
 * machine: shown as a claim, and no decision here. Before, `merge <group>` answered "already
 * merged" for a group only claimed merged (nothing could be merged here), and an attempt claimed
 * MERGED had `merge <group>` settle the group here as merged by it, discarding the others.
 */

let world: Origin | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

async function publishedGroup(groupClaims: 'MERGED' | 'ENDED') {
  world = origin({ 'src/app.ts': 'export const x = 0;\n' });
  const attacker = machine(world, 'attacker');
  const laptop = machine(world, 'laptop');
  const { group, runs } = await fixGroup(attacker.repo, attacker.ledger, 'two ways');
  await updateState(attacker.ledger, runs[0]!, { status: 'MERGED' });
  if (groupClaims === 'MERGED') {
    const merged = { attempt: 1, run: runs[0]!.name, at: '2026-03-01T11:00:00Z' };
    await updateGroupState(attacker.ledger, group.name, () => ({ status: 'MERGED', merged }));
  }
  expect((await attacker.agentbox(['push', group.meta.group_id])).code).toBe(0);
  expect((await laptop.agentbox(['fetch'])).code).toBe(0);
  const stateOf = (k: number) => readState(path.join(laptop.ledger.runsDir, runs[k]!.name));
  const groupState = () =>
    JSON.parse(fs.readFileSync(path.join(laptop.ledger.dir, 'groups', group.name, 'state.json'), 'utf8'));
  return { laptop, id: group.meta.group_id, runs, stateOf, groupState };
}

describe('a decision a publication claims decides nothing here', () => {
  it('a group claimed MERGED shows so, marked; one of its attempts is merged here, and that decision replaces the claim', async () => {
    const { laptop, id, stateOf, groupState } = await publishedGroup('MERGED');
    const status = await laptop.agentbox(['status']);
    expect(status.stdout).toMatch(new RegExp(`${id}\\s+group\\s+MERGED\\*\\s.*attacker\\.example`));
    const show = await laptop.agentbox(['show', id]);
    expect(show.stdout).toContain(
      'MERGED* — claimed by its publication (ran on attacker.example, fetched from origin), not decided here',
    );

    // The page says the same, and offers attempt 2 (in REVIEW) to merge here.
    const page = groupDetail(laptop.ledger, id);
    expect(page.claim_line).toContain(
      'its publication claims MERGED (attempt 1): it ran on attacker.example',
    );
    expect(page.attempts.map((a) => [a.attempt, a.mergeable])).toEqual([
      [1, false],
      [2, true],
    ]);

    const merged = await laptop.agentbox(['merge', id, '--attempt', '2', '--yes', '--force']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 2;\n');
    // Decided here now: the group merged by attempt 2, attempt 1 discarded here, no claim left.
    expect(groupState()).toMatchObject({ status: 'MERGED', merged: { attempt: 2 } });
    expect(groupState().claimed_status).toBeUndefined();
    expect(groupDetail(laptop.ledger, id).claim_line).toBeNull();
    expect(stateOf(1)).toMatchObject({ status: 'MERGED' });
    expect(stateOf(0)).toMatchObject({ status: 'DISCARDED' });
    for (const k of [0, 1]) expect(stateOf(k)!.publication?.claimed_status).toBeUndefined();
    const after = await laptop.agentbox(['status']);
    expect(after.stdout).toMatch(new RegExp(`${id}\\s+group\\s+MERGED\\s`));
    // A later fetch keeps the decision made here.
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    expect(groupState()).toMatchObject({ status: 'MERGED', merged: { attempt: 2 } });
  });

  it('an attempt claimed MERGED does not settle its group here', async () => {
    const { laptop, id, stateOf, groupState } = await publishedGroup('ENDED');
    const merge = await laptop.agentbox(['merge', id, '--yes']);
    expect(merge.code).toBe(1);
    expect(merge.stderr).toContain('no attempt of group');
    expect(merge.stderr).toContain('attempt 1: MERGED, as its publication claims');
    expect(groupState().status).toBe('ENDED');
    expect(stateOf(1)).toMatchObject({ status: 'REVIEW' });
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 0;\n');
  });

  it('a run claimed MERGED is merged here when the person takes the claim (--force), and stays so', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'one way');
    await updateState(attacker.ledger, run, { status: 'MERGED' });
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    const refused = await laptop.agentbox(['merge', run.id, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('its publication claims MERGED');
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 0;\n');
    const merged = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(laptop.repo.read('src/app.ts')).not.toBe('export const x = 0;\n');
    const state = readState(path.join(laptop.ledger.runsDir, run.name))!;
    expect(state.status).toBe('MERGED');
    expect(state.publication?.claimed_status).toBeUndefined();
    // Merged here: a second merge says so, as for any run merged here.
    const again = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(again.stderr).toContain('is already merged');
  });

  it('a publication without the patch an earlier one had: the patch goes here too, said (it stayed, mergeable)', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'withdrawn');
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    const here = path.join(laptop.ledger.runsDir, run.name, 'changes.patch');
    expect(fs.existsSync(here)).toBe(true);
    fs.rmSync(path.join(run.dir, 'changes.patch'));
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stdout).toMatch(new RegExp(`changed  ${run.name}: patch [0-9a-f]{12} → none`));
    expect(fs.existsSync(here)).toBe(false);
    const merge = await laptop.agentbox(['merge', run.id, '--yes', '--force']);
    expect(laptop.repo.read('src/app.ts')).toBe('export const x = 0;\n');
    expect(merge.stdout + merge.stderr).not.toMatch(/✓ merged/);
  });

  it('a run decided here stays decided after gc removed its folder: republished, it is not imported again (it came back in REVIEW)', async () => {
    world = origin({ 'src/app.ts': 'export const x = 0;\n' });
    const attacker = machine(world, 'attacker');
    const laptop = machine(world, 'laptop');
    const run = await fixRun(attacker.repo, attacker.ledger, 'once');
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    expect((await laptop.agentbox(['fetch'])).code).toBe(0);
    expect((await laptop.agentbox(['discard', run.id])).code).toBe(0);
    const gc = await laptop.agentbox(['gc', '--older-than', '1ms']);
    expect(gc.code, gc.stderr).toBe(0);
    expect(fs.existsSync(path.join(laptop.ledger.runsDir, run.name))).toBe(false);
    // The publisher changes the run and publishes it again.
    fs.appendFileSync(path.join(run.dir, 'report.md'), 'again\n');
    expect((await attacker.agentbox(['push', run.id])).code).toBe(0);
    const fetched = await laptop.agentbox(['fetch']);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stdout).toContain('0 new, 0 updated, 1 already decided here');
    expect(fs.existsSync(path.join(laptop.ledger.runsDir, run.name))).toBe(false);
    const status = await laptop.agentbox(['status']);
    expect(status.stdout).not.toContain(run.id);
  });
});
