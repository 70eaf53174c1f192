import type { Ledger } from '../ledger/paths.js';
import { type RunDetails, readRun } from '../ledger/read.js';
import type { RunStatus } from '../ledger/types.js';
import { inOrder, RunFollower, type RunSighting, type Timed } from '../present/watch.js';
import { isAlive } from '../process/reap.js';
import { groupAttempts, groupStatus } from './attempts.js';
import { type GroupDetails, readGroup } from './store.js';

/** What following a group sees: each attempt's sightings (k: the attempt), then how the group ended. */
export type GroupSighting =
  | { readonly kind: 'attempt'; readonly attempt: number; readonly run: string; readonly seen: RunSighting }
  /** `gone`: its process died with attempts running or waiting (recover takes it up). */
  | {
      readonly kind: 'group';
      readonly group: GroupDetails;
      readonly status: RunStatus;
      readonly gone: boolean;
    };

type Followed = { readonly run: RunDetails; readonly follower: RunFollower; ended: boolean };

/**
 * Follows every attempt of a group at once, live or in a replay: the attempts that run, and those
 * that wait, from when they start; the sightings of one look at all of them in time order. Ends
 * once the group has ended (or its process is gone) and every attempt followed has ended. Reads only.
 */
export async function* followGroup(
  ledger: Ledger,
  name: string,
  pollMs = 250,
): AsyncGenerator<GroupSighting> {
  const followed = new Map<number, Followed>();
  for (;;) {
    // Read before the attempts: a group that had ended by then has started all it will.
    const group = readGroup(ledger, name);
    const alive = isAlive(group.state.pid, group.state.pid_start);
    for (const m of group.state.members) if (m.run && !followed.has(m.attempt)) follow(ledger, followed, m);
    const seen: (Timed & { attempt: number })[] = [];
    const ends: GroupSighting[] = [];
    for (const [attempt, f] of followed) {
      if (f.ended) continue;
      const look = f.follower.look();
      seen.push(...look.seen.map((s) => ({ ...s, attempt })));
      if (look.end) {
        f.ended = true;
        ends.push({ kind: 'attempt', attempt, run: f.run.name, seen: look.end });
      }
    }
    for (const s of inOrder(seen)) {
      const { attempt, ...sighting } = s as Timed & { attempt: number };
      yield { kind: 'attempt', attempt, run: followed.get(attempt)!.run.name, seen: sighting as RunSighting };
    }
    yield* ends;
    const over = group.state.status !== 'ACTIVE' || !alive;
    if (over && [...followed.values()].every((f) => f.ended)) {
      const status = groupStatus(group, groupAttempts(ledger, group), alive);
      yield { kind: 'group', group, status, gone: group.state.status === 'ACTIVE' && !alive };
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Starts following an attempt's run; one whose folder is still being made is tried at the next look. */
function follow(ledger: Ledger, followed: Map<number, Followed>, m: { attempt: number; run: string | null }) {
  try {
    const run = readRun(ledger, m.run!);
    if (run.state) followed.set(m.attempt, { run, follower: new RunFollower(run), ended: false });
  } catch {
    // Not whole yet (created a moment ago) or gone (gc): the next look tries again.
  }
}
