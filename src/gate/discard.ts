import { AgentboxError } from '../errors.js';
import { ownTraces } from '../git/own-traces.js';
import { listWorktrees, removeWorktree } from '../git/worktree.js';
import { decidedHere } from '../ledger/claim.js';
import { EventLog } from '../ledger/events.js';
import { openLedger, type RunDetails, updateState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { ownPrivateBase, removeRunArea } from '../sandbox/private.js';

export interface DiscardResult {
  readonly run: string;
  readonly status: 'MERGED' | 'DISCARDED';
  /** It was DISCARDED before. */
  readonly already: boolean;
  readonly removedWorktree: boolean;
  readonly deletedBranch: boolean;
  readonly branch: string | null;
  /** What the run's state names that is not its own worktree or branch: left alone (run-traces.ts). */
  readonly left: readonly string[];
}

/** Removes a run's worktree and branch and records it DISCARDED (a merged run stays MERGED). */
export async function discardRun(root: string, run: RunDetails): Promise<DiscardResult> {
  const state = run.state;
  if (state?.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${run.name} is still running`, {
      hint: `stop it first (agentbox stop ${run.meta.run_id}, or Ctrl-C in its terminal), then discard it`,
    });
  }
  let removed = { removedWorktree: false, deletedBranch: false };
  const own = state ? ownTraces(root, run.name, state, await listWorktrees(root)) : null;
  if (own?.left.length) new EventLog(run.dir).append({ event: 'discard_left', left: own.left });
  if (own?.worktree) {
    removed = await removeWorktree(root, { path: own.worktree, branch: own.branch, deleteBranch: true });
  }
  // A run that crashed and was never taken up left its private area: it will not be resumed now.
  removeRunArea(ownPrivateBase(), run.name);
  const ledger = openLedger(root);
  // A decision a fetched run's publication claims was made elsewhere: discarded here all the same.
  const merged = state?.status === 'MERGED' && decidedHere(state);
  const already = state?.status === 'DISCARDED' && decidedHere(state);
  if (!already && !merged)
    await updateState(ledger, run.name, { status: 'DISCARDED' }, { event: 'discarded' });
  else if (removed.removedWorktree) await updateState(ledger, run.name, {}, { event: 'worktree_removed' });
  return {
    run: run.name,
    status: merged ? 'MERGED' : 'DISCARDED',
    already,
    ...removed,
    branch: own?.branch ?? null,
    left: own?.left ?? [],
  };
}
