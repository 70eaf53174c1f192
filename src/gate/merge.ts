import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { applyPatch, checkPatch, inspectPatchFile, patchStat } from '../git/apply.js';
import type { Uncommitted } from '../git/commit-patch.js';
import { runGit } from '../git/exec.js';
import { patchResult } from '../git/result-commit.js';
import { type SensitiveChange, sensitiveLines } from '../git/sensitive.js';
import type { LeftOutRecord } from '../git/too-large.js';
import { decidedHere } from '../ledger/claim.js';
import { EventLog } from '../ledger/events.js';
import { openLedger, type RunDetails, updateState } from '../ledger/index.js';
import { patchSha256 } from '../ledger/reviewed.js';
import { isAlive } from '../process/reap.js';
import { type NestedRecord, nestedOfEvents } from '../run/end/finalize-nested.js';
import { leftOutOfEvents } from '../run/end/left-out.js';
import { terminalExact, terminalName } from '../util/terminal-text.js';
import { type Claim, claimOf } from './claims.js';
import { landCommit, prepareCommit } from './merge-commit.js';
import { conflictHint, locallyChanged } from './merge-conflict.js';
import { type NotPassing, notPassing, notPassingLine } from './merge-gate.js';
import { afterApply, type MergeGit, mergeGit, refuseRunnable } from './merge-git.js';
import { type PatchSeen, patchSeen, shortSha } from './patch-seen.js';

/*
 * The human gate's domain half: what a merge or a discard would do, and doing it, as data. The
 * commands (src/commands/merge.ts, discard.ts) confirm and print; the web UI (src/web/actions.ts)
 * calls these too.
 */

/** A merge checked and ready: nothing has been changed yet. */
export interface MergePlan {
  readonly root: string;
  readonly run: RunDetails;
  readonly patch: string;
  /** git's `--stat` of the patch. */
  readonly stat: string;
  readonly sensitive: readonly SensitiveChange[];
  /** The run did not end REVIEW with its checks passing: shown first; `--yes` needs `--force`. */
  readonly notPassing: NotPassing | null;
  /** Nested repositories the run's end left out of the patch: named before the person decides. */
  readonly nested: readonly NestedRecord[];
  /** The agent's files too large for the patch (src/git/too-large.ts): named too. */
  readonly leftOut: LeftOutRecord | null;
  /** What the person's git would run here, kept from running (src/gate/merge-git.ts). */
  readonly git: MergeGit;
  /** The sha256 of the patch checked here: what is applied, or nothing is (see applyMerge). */
  readonly sha256: string;
  /** What the person was last shown of it (src/gate/patch-seen.ts). */
  readonly seen: PatchSeen;
  /** A fetched run: what its publication claims (src/gate/claims.ts); `--yes` needs `--force`. */
  readonly claim: Claim | null;
  /** What the checkout is on: `branch main`, or `a detached HEAD` (the merge lands there). */
  readonly onto: string;
}

export interface MergeResult {
  readonly run: string;
  readonly status: 'MERGED';
  /** Paths the patch touched (both sides of a rename). */
  readonly files: readonly string[];
  /** How many files the patch changes, as people count them. */
  readonly changed: number;
  readonly commit: string | null;
  /** `--commit`: the merged files with edits of the person's own, left out of the commit. */
  readonly uncommitted: readonly Uncommitted[];
  /** null: not committed; false: committed, and no hook ran (none ever does). */
  readonly hooksRan: false | null;
  /** The person's commit hooks that did not run for the commit merge made. */
  readonly hooksNotRun: readonly string[];
  /** Where those hooks are. */
  readonly hooksDir: string;
  /** The patch's changes to hook files (the person's next commit runs them). */
  readonly hookFiles: readonly string[];
  /** Files the merged attributes give a filter of the person's, which did not run on them. */
  readonly unfiltered: readonly { path: string; driver: string }[];
  readonly sensitive: readonly SensitiveChange[];
  /** The sha256 of the patch applied. */
  readonly patch_sha256: string;
}

/**
 * Every check a merge makes before it changes anything: a fix run, not merged, discarded or
 * running, with a patch that applies to `root` and has no change agentbox refuses outright.
 * Throws an AgentboxError naming what failed and the next command.
 */
export async function prepareMerge(root: string, run: RunDetails): Promise<MergePlan> {
  const patch = mergeablePatch(run);
  const { name } = run;
  // Hashed before it is checked: a patch replaced after this is refused at applyMerge.
  const seen = patchSeen(run.dir);
  if (!seen) throw new AgentboxError('USAGE', `run ${name} has no changes to merge (no changes.patch)`);
  const git = await mergeGit(root);
  await refuseRunnable(root, run, fs.readFileSync(patch), git);
  // The patch is the run's result commit, as diff showed it (a fetched run's records are claims:
  // its patch is what was shown there).
  const base = run.meta.repo_sha_start;
  if (run.meta.origin === undefined && base)
    await patchResult(
      root,
      { name, id: run.meta.run_id },
      { base, patchFile: patch, commit: run.state?.result_commit ?? null },
    );
  const stat = await patchStat(root, patch);
  const check = await checkPatch(root, patch, git.config);
  if (!check.ok) {
    const edited = await locallyChanged(root, check.conflicts, git.config);
    throw new AgentboxError(
      'MERGE_CONFLICT',
      // git names the agent's files as they are: shown escaped, never stripped (docs/security.md).
      `the changes of ${name} do not apply to ${root}: conflicts in ${check.conflicts.map(terminalName).join(', ') || '(see below)'}\n${terminalExact(check.message.trim())}`,
      { hint: conflictHint(run.meta.run_id, patch, edited) },
    );
  }
  const { sensitive, refused } = await inspectPatchFile(root, patch);
  if (refused.length > 0) {
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${name}: agentbox never applies these changes\n${sensitiveLines(refused).join('\n')}`,
      {
        hint: `nothing was changed. ${run.meta.origin === undefined ? `Ask the agent to take it out (agentbox revise ${run.meta.run_id} "…"), discard` : 'Discard'} the run (agentbox discard ${run.meta.run_id}), or take what you trust from ${patch} by hand`,
      },
    );
  }
  const events = new EventLog(run.dir).read();
  const claim = claimOf(run, events);
  const branch = await runGit(['symbolic-ref', '--short', '-q', 'HEAD'], { cwd: root });
  return {
    onto: branch.exitCode === 0 && branch.stdout ? `branch ${branch.stdout}` : 'a detached HEAD',
    root,
    run,
    patch,
    stat,
    sensitive,
    notPassing: notPassing(run, events),
    nested: nestedOfEvents(events),
    leftOut: leftOutOfEvents(events),
    git,
    sha256: seen.sha256,
    seen,
    claim,
  };
}

/** The checks before anything else: a fix run, ended, not merged or discarded, with a patch. */
export function mergeablePatch(run: RunDetails): string {
  const { state, name } = run;
  if (run.meta.type !== 'fix') {
    throw new AgentboxError('USAGE', `run ${name} is a ${run.meta.type} run: it has no changes to merge`, {
      hint: 'only fix runs produce changes.patch',
    });
  }
  // A MERGED or DISCARDED a fetched run's publication claims was said elsewhere: the claim is shown
  // with the run (merge asks, or --yes needs --force), and the run is merged here or not.
  const decided = decidedHere(state);
  if (decided && state?.status === 'MERGED')
    throw new AgentboxError('USAGE', `run ${name} is already merged`, { hint: mergedHint(run.meta.run_id) });
  if (decided && state?.status === 'DISCARDED')
    throw new AgentboxError('USAGE', `run ${name} was discarded; its patch is kept in ${run.dir}`);
  if (state?.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${name} is still running`, {
      hint: 'wait for it to end (agentbox status), then merge',
    });
  }
  if (state?.status === 'ACTIVE' && run.meta.origin) {
    throw new AgentboxError('USAGE', `run ${name} is still running on ${run.meta.origin.host}`, {
      hint: `once it has ended: agentbox fetch ${run.meta.origin.remote}, then merge`,
    });
  }
  const patch = path.join(run.dir, 'changes.patch');
  if (!fs.existsSync(patch) || fs.statSync(patch).size === 0) {
    throw new AgentboxError('USAGE', `run ${name} has no changes to merge (no changes.patch)`, {
      hint: `see what it did: agentbox show ${run.meta.run_id}`,
    });
  }
  return patch;
}

/** Where to go from a run already merged: see it, or start anew. Pure. */
const mergedHint = (id: string) =>
  `see it: agentbox show ${id}; for new work on it: agentbox fix "…", or run its task again: agentbox rerun ${id}`;

/**
 * Applies a prepared merge to the working tree (all or nothing), commits it when asked — with no
 * hook and no filter of the person's, so the run's code never runs as them (merge-git.ts) — and
 * records the run MERGED.
 */
export async function applyMerge(
  plan: MergePlan,
  options: { readonly commit: boolean },
): Promise<MergeResult> {
  const { root, run, patch, sensitive } = plan;
  assertSamePatch(plan);
  // A gitlink never lands (git apply leaves an empty folder): it is neither committed nor counted.
  const gitlinks = new Set(sensitive.filter((c) => c.kind === 'gitlink').map((c) => c.path));
  // The commit is made first (HEAD plus the patch): what git would refuse is refused, nothing changed.
  const made = options.commit ? await prepareCommit(plan, [...gitlinks], plan.git.config) : null;
  const files = (await applyPatch(root, patch, plan.git.config)).files.filter((f) => !gitlinks.has(f));
  const changed =
    fs
      .readFileSync(patch, 'latin1')
      .split('\n')
      .filter((l) => l.startsWith('diff --git ')).length - gitlinks.size;
  const hookFiles = [...new Set(sensitive.filter((c) => c.kind === 'hooks').map((c) => c.path))];
  const after = await afterApply(root, run, files, plan.git);
  const landed = made ? await landCommit(plan, made, files, after) : null;
  if (!made) after.log(false);
  const commit = landed?.commit ?? null;
  const notRun = commit ? plan.git.hooks : [];
  const accepted = `${sensitive.length > 0 ? ` · ${sensitive.length} sensitive change(s) accepted` : ''}${
    plan.notPassing ? ` · merged though it did not pass: ${notPassingLine(plan.notPassing)}` : ''
  }`;
  await updateState(
    openLedger(root),
    run.name,
    { status: 'MERGED' },
    {
      event: 'merged',
      // The patch's hash first: INDEX.jsonl cuts a long detail.
      detail: `patch sha256 ${plan.sha256} · ${commit ? `commit ${commit}${notRun.length > 0 ? ` (git hooks not run: ${notRun.join(', ')})` : ''}` : `${files.length} file(s)`}${accepted}`,
    },
  );
  return {
    run: run.name,
    status: 'MERGED',
    files,
    changed,
    commit,
    hooksRan: commit ? false : null,
    uncommitted: landed?.uncommitted ?? [],
    hooksNotRun: notRun,
    hooksDir: plan.git.hooksDir,
    hookFiles,
    unfiltered: after.unfiltered,
    sensitive,
    patch_sha256: plan.sha256,
  };
}

/**
 * The patch is still the one checked and shown (its hash): a fetch or a resume that replaced it
 * since prepareMerge stops the merge before anything is written. NOTE: git reads the file just
 * after; a replacement in those milliseconds is the one window left (the file is renamed into
 * place whole, so it is one patch or the other, never a mix).
 */
function assertSamePatch(plan: MergePlan): void {
  const now = patchSha256(plan.run.dir);
  if (now === plan.sha256) return;
  new EventLog(plan.run.dir).append({
    event: 'merge_refused',
    reason: 'patch_replaced',
    detail: `${plan.sha256} → ${now}`,
  });
  throw new AgentboxError(
    'MERGE_REFUSED',
    `refusing to merge ${plan.run.name}: its patch was replaced while merging (sha256 ${shortSha(plan.sha256)} → ${now === null ? 'none' : shortSha(now)})`,
    { hint: `nothing was changed. See the new one: agentbox diff ${plan.run.meta.run_id}, then merge again` },
  );
}

/** The person applied the change by hand (`merge --mark-merged`): only the state says MERGED. */
export async function recordMergedByHand(root: string, run: RunDetails): Promise<void> {
  await updateState(
    openLedger(root),
    run.name,
    { status: 'MERGED' },
    { event: 'merged', detail: 'marked merged by hand' },
  );
}
