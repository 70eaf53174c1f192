import fs from 'node:fs';
import path from 'node:path';
import { ownTraces } from '../git/own-traces.js';
import { deleteBranch, deleteRef, listAgentboxRefs } from '../git/traces.js';
import { listWorktrees, removeWorktree } from '../git/worktree.js';
import { type GroupDetails, listGroupNames, readGroup } from '../group/store.js';
import { decidedHere } from '../ledger/claim.js';
import { recordDecided } from '../ledger/decided.js';
import {
  appendIndexEvent,
  type Ledger,
  listRunNames,
  makeIndexEvent,
  openLedger,
  POINTER_NAMES,
  type RunState,
  readMeta,
  readState,
  regenerateIndexMd,
  setLatest,
  unmarkActive,
} from '../ledger/index.js';
import { readLinkedRun } from '../ledger/links.js';
import { isAlive } from '../process/reap.js';
import { ownPrivateBase, removeRunArea } from '../sandbox/private.js';
import { removeRunCommands } from '../slash/index.js';

export interface GcItem {
  /** The run it belongs to (for a group_folder: the group). */
  readonly run: string;
  readonly what: 'worktree' | 'branch' | 'checkpoint' | 'run_folder' | 'group_folder';
  readonly path: string;
}

/** Finished and decided: nothing in them waits for anyone. REVIEW waits for you; ACTIVE is running. */
const COLLECTABLE = new Set(['DONE', 'MERGED', 'DISCARDED', 'ABORTED', 'CRASHED', 'STALLED', 'FAILED']);
/**
 * The worktree and branch have served their purpose: the human gate decided, or the fix run ended
 * DONE, with no change (one with a change ends in REVIEW). An ABORTED, CRASHED or STALLED run's
 * stay for its resume.
 */
const SETTLED = new Set(['MERGED', 'DISCARDED', 'DONE']);

/**
 * What `agentbox gc` collects: the worktrees and branches of MERGED and DISCARDED runs and of fix
 * runs that ended DONE with no change (and their checkpoints); with a `cutoff` (ms since the epoch), also whole run folders of finished runs that
 * ended before then. Runs in REVIEW (changes waiting for the gate) and ACTIVE runs are never
 * touched. `dry`: lists, removes nothing.
 */
export async function collectGarbage(
  root: string,
  cutoff: number | null,
  dry: boolean,
): Promise<{ removed: GcItem[]; keptReview: string[] }> {
  const ledger = openLedger(root);
  const worktrees = await listWorktrees(root);
  const refs = new Set(await listAgentboxRefs(root));
  const removed: GcItem[] = [];
  const keptReview: string[] = [];
  const deletedRuns: { name: string; state: RunState }[] = [];

  for (const name of listRunNames(ledger)) {
    let state: RunState | null;
    try {
      state = readState(path.join(ledger.runsDir, name));
    } catch {
      continue; // damaged: `agentbox show` explains it; gc does not guess
    }
    if (!state) continue;
    const old = cutoff !== null && Date.parse(state.ended_at ?? state.started_at) < cutoff;
    if (old && state.status === 'REVIEW') keptReview.push(name);
    const deleteFolder = old && COLLECTABLE.has(state.status);
    if (!deleteFolder && !SETTLED.has(state.status)) continue;

    const items: GcItem[] = [];
    // Only the run's own worktree and branch (a planted state may name the person's: own-traces.ts).
    const own = ownTraces(root, name, state, worktrees);
    if (own.worktree && worktrees.some((w) => w.path === own.worktree))
      items.push({ run: name, what: 'worktree', path: own.worktree });
    if (own.branch && refs.has(`refs/heads/${own.branch}`))
      items.push({ run: name, what: 'branch', path: own.branch });
    const checkpoint = `refs/agentbox/checkpoints/${name}`;
    if (refs.has(checkpoint)) items.push({ run: name, what: 'checkpoint', path: checkpoint });
    if (deleteFolder) items.push({ run: name, what: 'run_folder', path: path.join(ledger.runsDir, name) });
    if (!dry) await collect(root, ledger, name, state, items);
    if (deleteFolder) deletedRuns.push({ name, state });
    removed.push(...items);
  }
  if (!dry && deletedRuns.length > 0) await afterDeletes(ledger, deletedRuns);
  if (cutoff !== null) {
    const gone = new Set(deletedRuns.map((d) => d.name));
    removed.push(...collectGroups(ledger, cutoff, gone, dry));
  }
  return { removed, keptReview };
}

/**
 * With --older-than: the folder of a group that ended before the cutoff and none of whose attempts
 * has a run folder left (all removed, now or before, or never started) — its patches with it. A
 * group with a run left keeps its folder and patches: the group is how that run is read.
 */
function collectGroups(ledger: Ledger, cutoff: number, gone: ReadonlySet<string>, dry: boolean): GcItem[] {
  const items: GcItem[] = [];
  for (const name of listGroupNames(ledger)) {
    let group: GroupDetails;
    try {
      group = readGroup(ledger, name);
    } catch {
      continue; // damaged: gc does not guess
    }
    const { state } = group;
    if (state.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) continue;
    if (!(Date.parse(state.ended_at ?? state.started_at) < cutoff)) continue;
    const left = state.members.some(
      (m) => m.run !== null && !gone.has(m.run) && fs.existsSync(path.join(ledger.runsDir, m.run)),
    );
    if (left) continue;
    items.push({ run: name, what: 'group_folder', path: group.dir });
    if (!dry) fs.rmSync(group.dir, { recursive: true, force: true });
  }
  return items;
}

async function collect(
  root: string,
  ledger: Ledger,
  name: string,
  state: RunState,
  items: readonly GcItem[],
): Promise<void> {
  const has = (what: GcItem['what']) => items.some((i) => i.what === what);
  const worktree = items.find((i) => i.what === 'worktree')?.path;
  const branch = items.find((i) => i.what === 'branch')?.path ?? null;
  if (worktree) {
    await removeWorktree(root, { path: worktree, branch, deleteBranch: branch !== null });
  } else if (branch) {
    await deleteBranch(root, branch);
  }
  if (has('checkpoint')) await deleteRef(root, `refs/agentbox/checkpoints/${name}`);
  if (has('run_folder')) {
    // Everything the ledger shows about the run goes with it: the folder last, so a gc that dies
    // half-way leaves a run that a second gc finishes.
    if (state.launch_dir) removeRunCommands(state.launch_dir, name.slice(-6));
    removeRunArea(ownPrivateBase(), name);
    const meta = readMeta(path.join(ledger.runsDir, name));
    if (meta)
      appendIndexEvent(ledger, makeIndexEvent(meta, state, 'deleted', 'removed by agentbox gc', new Date()));
    // A fetched run decided here stays decided: a later publication of it is not a new run.
    if (meta?.origin && decidedHere(state))
      recordDecided(ledger, meta.origin.remote, meta.origin.run, {
        local: name,
        status: state.status as 'MERGED' | 'DISCARDED',
      });
    unmarkActive(ledger, name);
    fs.rmSync(path.join(ledger.runsDir, name), { recursive: true, force: true });
  }
}

/** Pointers and `latest` that named a deleted run are moved or removed; INDEX.md is rendered again. */
async function afterDeletes(ledger: Ledger, deleted: readonly { name: string }[]): Promise<void> {
  const gone = new Set(deleted.map((d) => d.name));
  for (const pointer of POINTER_NAMES) {
    const link = path.join(ledger.pointersDir, pointer);
    const target = readLinkedRun(link);
    if (target && gone.has(target)) fs.rmSync(link, { force: true });
  }
  const latest = readLinkedRun(ledger.latest);
  if (latest && gone.has(latest)) {
    const newest = listRunNames(ledger)[0];
    if (newest) setLatest(ledger, newest);
    else fs.rmSync(ledger.latest, { force: true });
  }
  await regenerateIndexMd(ledger);
}
