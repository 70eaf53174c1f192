import fs from 'node:fs';
import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import {
  BRANCH_PREFIX,
  branchOfRef,
  commitsOnlyOn,
  deleteBranch,
  deleteRef,
  listAgentboxRefs,
  uncommittedPaths,
} from '../git/traces.js';
import { listWorktrees, removeWorktree } from '../git/worktree.js';
import { type Ledger, listRunNames, type RunState, readState } from '../ledger/index.js';
import { isRunName, runIdOf } from '../ledger/names.js';
import { isAlive } from '../process/reap.js';
import { fetchedRemotes, trackingCopies } from '../remote/tracking.js';
import { AGENT_RUN_DIR } from '../run/end/artifacts.js';
import { listRunCommandDirs, runCommandsDir } from '../slash/index.js';

/**
 * `agentbox uninstall --purge`, the part outside the ledger: every worktree, `agentbox/<run>`
 * branch and `refs/agentbox/` ref agentbox made, the remote-tracking copies of published run
 * branches that `agentbox fetch` left (src/remote/tracking.ts), and the run-scoped slash commands — found from
 * the runs in the ledger and from git itself, so leftovers of runs the ledger no longer knows go
 * too. Changes that exist nowhere else are reported before anything is removed.
 */
export interface PurgeItem {
  readonly what: 'worktree' | 'branch' | 'ref' | 'tracking' | 'commands';
  readonly path: string;
  /** The run it belongs to, when its name says so. */
  readonly run: string | null;
}

/** Worktrees first: a branch checked out in one cannot be deleted. */
const REMOVAL_ORDER: readonly PurgeItem['what'][] = ['worktree', 'branch', 'ref', 'tracking', 'commands'];

export interface Traces {
  readonly items: readonly PurgeItem[];
  /** ACTIVE runs whose process is alive (or cannot be judged): nothing may be removed under them. */
  readonly running: readonly string[];
  /** The ledger's runs and their states (null: damaged). */
  readonly states: ReadonlyMap<string, RunState | null>;
}

export interface Unsettled {
  /** The run, or the leftover's run name. */
  readonly run: string;
  readonly reasons: readonly string[];
}

export interface ChangeFacts {
  /** null: no run in the ledger (a leftover of a run that is gone). */
  readonly status: RunState['status'] | null;
  /** Files changed in its worktree, its own folder (.agentbox-run/) left out. */
  readonly uncommitted: number;
  /** Commits on its branch and on no other branch, tag or remote. */
  readonly ownCommits: number;
  readonly patchBytes: number;
}

/** Why removing a run's traces and folder would lose changes; empty when nothing would. Pure. */
export function unsettledReasons(f: ChangeFacts): string[] {
  // The person decided: merged changes are in the repository, discarded ones were given up.
  if (f.status === 'MERGED' || f.status === 'DISCARDED') return [];
  const reasons: string[] = [];
  if (f.status === 'REVIEW') reasons.push('its changes wait for review (REVIEW)');
  else if (f.patchBytes > 0) reasons.push(`its changes.patch was never merged (${f.status})`);
  if (f.uncommitted > 0) reasons.push(`${f.uncommitted} changed file(s) in its worktree`);
  if (f.ownCommits > 0) reasons.push(`${f.ownCommits} commit(s) on no other branch`);
  return reasons;
}

const runOfBranch = (branch: string | null): string | null => {
  const tail = branch?.startsWith(BRANCH_PREFIX) ? branch.slice(BRANCH_PREFIX.length) : null;
  return tail && isRunName(tail) ? tail : null;
};

function readStates(ledger: Ledger): Map<string, RunState | null> {
  const states = new Map<string, RunState | null>();
  if (!fs.existsSync(ledger.runsDir)) return states;
  for (const name of listRunNames(ledger)) {
    try {
      states.set(name, readState(path.join(ledger.runsDir, name)));
    } catch {
      states.set(name, null); // damaged: its traces are still found through git
    }
  }
  return states;
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Everything agentbox made in git (and the run commands) in the repository at `root`. */
export async function findTraces(root: string, ledger: Ledger): Promise<Traces> {
  const states = readStates(ledger);
  const running = [...states]
    .filter(([, s]) => s?.status === 'ACTIVE' && (s.pid === null || isAlive(s.pid, s.pid_start)))
    .map(([name]) => name);
  const byWorktree = new Map([...states].map(([name, s]) => [s?.worktree_path, name]));
  const items: PurgeItem[] = [];
  for (const wt of await listWorktrees(root)) {
    if (wt.path === root) continue;
    const run = byWorktree.get(wt.path) ?? runOfBranch(wt.branch);
    if (run === null || run === undefined) continue; // a worktree of the person's own
    items.push({ what: 'worktree', path: wt.path, run });
  }
  const refs = await listAgentboxRefs(root);
  for (const ref of refs) {
    const branch = branchOfRef(ref);
    if (branch === null) {
      const tail = ref.split('/').at(-1) ?? '';
      items.push({ what: 'ref', path: ref, run: isRunName(tail) ? tail : null });
      continue;
    }
    // A branch under agentbox/ that is not named after a run is not one agentbox made.
    const run = runOfBranch(branch) ?? [...states].find(([, s]) => s?.branch === branch)?.[0] ?? null;
    if (run !== null) items.push({ what: 'branch', path: branch, run });
  }
  for (const { ref, run } of await trackingCopies(root, fetchedRemotes(ledger, refs)))
    items.push({ what: 'tracking', path: ref, run });
  for (const id of listRunCommandDirs(root))
    items.push({ what: 'commands', path: runCommandsDir(root, id), run: null });
  for (const [name, s] of states) {
    const launch = s?.launch_dir;
    if (!launch || launch === root || !fs.existsSync(runCommandsDir(launch, runIdOf(name)))) continue;
    items.push({ what: 'commands', path: runCommandsDir(launch, runIdOf(name)), run: name });
  }
  const order = (i: PurgeItem) => REMOVAL_ORDER.indexOf(i.what);
  return { items: items.sort((a, b) => order(a) - order(b)), running, states };
}

/** The runs and leftovers whose changes removing the traces and the ledger would lose. */
export async function unsettledChanges(root: string, ledger: Ledger, traces: Traces): Promise<Unsettled[]> {
  const { items, states } = traces;
  const unsettled: Unsettled[] = [];
  const runs = new Set<string>([...states.keys(), ...items.flatMap((i) => (i.run ? [i.run] : []))]);
  for (const run of runs) {
    const worktree = items.find((i) => i.what === 'worktree' && i.run === run)?.path;
    const branch = items.find((i) => i.what === 'branch' && i.run === run)?.path;
    const status = states.has(run) ? (states.get(run)?.status ?? null) : null;
    if (status === 'MERGED' || status === 'DISCARDED') continue;
    const reasons = unsettledReasons({
      status,
      uncommitted:
        worktree && fs.existsSync(worktree)
          ? (await uncommittedPaths(worktree, [`${AGENT_RUN_DIR}/`])).length
          : 0,
      ownCommits: branch ? await commitsOnlyOn(root, branch) : 0,
      patchBytes: fileSize(path.join(ledger.runsDir, run, 'changes.patch')),
    });
    if (reasons.length > 0) unsettled.push({ run, reasons });
  }
  return unsettled;
}

/** How many worktrees are removed at once: each is mostly waiting on the file system's unlinks. */
const PARALLEL_WORKTREES = 4;

/**
 * Removes the items in REMOVAL_ORDER, telling `onRemoved` as each goes (what is already gone counts
 * as removed). Worktrees go a few at a time: a folder of `node_modules` takes git seconds to unlink,
 * and git's lock races between them are retried (gitRetrying).
 */
export async function removePurgeItems(
  root: string,
  items: readonly PurgeItem[],
  onRemoved: (item: PurgeItem, ms: number) => void = () => {},
): Promise<void> {
  const timed = async (item: PurgeItem, remove: () => unknown) => {
    const started = performance.now();
    await remove();
    onRemoved(item, performance.now() - started);
  };
  const worktrees = items.filter((i) => i.what === 'worktree');
  const queue = [...worktrees];
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      const wt = item;
      await timed(wt, () => removeWorktree(root, { path: wt.path, deleteBranch: false }));
    }
  };
  // Settled, not raced: a failure is thrown once every git started has ended, none left running.
  const workers = Array.from({ length: Math.min(PARALLEL_WORKTREES, queue.length) }, worker);
  const failed = (await Promise.allSettled(workers)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const dir of new Set(worktrees.map((i) => path.dirname(i.path)))) removeEmptyBase(dir);
  const order = (i: PurgeItem) => REMOVAL_ORDER.indexOf(i.what);
  for (const item of [...items].sort((a, b) => order(a) - order(b))) {
    if (item.what === 'branch') await timed(item, () => deleteBranch(root, item.path));
    else if (item.what === 'ref' || item.what === 'tracking')
      await timed(item, () => deleteRef(root, item.path));
    else if (item.what === 'commands') await timed(item, () => removeFolder(item.path));
  }
}

function removeFolder(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch (error) {
    throw fsError(error, 'delete', dir);
  }
}

/**
 * The per-repository folder under `…/agentbox/worktrees/` once its last worktree is gone, then
 * `worktrees/` and `agentbox/` when nothing else is in them (agentbox made them; other
 * repositories' folders keep them). A folder the person configured (runs.worktree_dir) is theirs
 * and stays.
 */
function removeEmptyBase(dir: string): void {
  if (path.basename(path.dirname(dir)) !== 'worktrees') return;
  if (path.basename(path.dirname(path.dirname(dir))) !== 'agentbox') return;
  for (const folder of [dir, path.dirname(dir), path.dirname(path.dirname(dir))]) {
    try {
      fs.rmdirSync(folder);
    } catch (error) {
      const code = errnoCode(error) ?? '';
      if (code === 'ENOENT') continue;
      if (['ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(code)) return;
      throw fsError(error, 'delete', folder);
    }
  }
}
