import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import type { CommandContext, Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { applyPatch, checkPatch, commitFiles, inspectPatchFile, patchStat } from '../git/apply.js';
import { findRepo } from '../git/repo.js';
import { type SensitiveChange, sensitiveLines } from '../git/sensitive.js';
import { removeWorktree } from '../git/worktree.js';
import { openLedger, type RunDetails, readRun, resolveRun, updateState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { styler } from '../util/style.js';

export { isAlive };

import { type InsideRun, insideRun, procReader } from '../airlock/inside.js';
import { showDiff } from '../review/diff.js';
import { findLedgerRoot } from '../watchdog/watchdog.js';
import { EventLog } from './events.js';
import { mergeMessage } from './result-message.js';

/**
 * The human gate refuses to run inside an agent: when this process or any of its ancestors is a
 * Claude Code session or an agentbox run's process (see src/airlock/inside.ts: the ancestors'
 * environments are what an agent cannot undo). The hooks and deny rules stop `agentbox merge`
 * before it starts; this stops it when it started anyway (`A=merge; agentbox $A`, `env -u …`), and
 * the calling run records the attempt.
 */
export function assertHuman(env: Env, command: string, cwd?: string): void {
  const inside = insideRun(env, process.pid, procReader);
  if (!inside) return;
  const reason = `agentbox ${command} is the human gate and does not run inside ${inside.what}`;
  recordGateRefusal(inside, cwd, { event: 'human_gate_refused', command, reason });
  throw new AgentboxError('HUMAN_GATE', reason, {
    hint: `run it yourself in a terminal: agentbox ${command} <run>`,
  });
}

/**
 * The refusal goes into the calling run's events.jsonl: through its ledger folder when this process
 * can find and write it, else its RUN_DIR. Inside a fix run's sandbox neither is writable: the
 * failed command is then logged from the stream when the run ends.
 */
function recordGateRefusal(inside: InsideRun, cwd: string | undefined, entry: Record<string, unknown>): void {
  const { run } = inside;
  const dirs: string[] = [];
  const root = run && cwd ? findLedgerRoot(cwd) : null;
  const ledgerDir = root && run ? path.join(root, '.agents', 'runs', run) : null;
  if (ledgerDir && fs.existsSync(path.join(ledgerDir, 'events.jsonl'))) dirs.push(ledgerDir);
  if (inside.runDir) dirs.push(inside.runDir);
  for (const dir of dirs) {
    try {
      new EventLog(dir).append(entry);
      return;
    } catch {
      // Not writable from here (a sandbox): try the next one.
    }
  }
}

async function openRun(ctx: CommandContext, ref: string): Promise<{ root: string; run: RunDetails }> {
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  return { root: repo.root, run: readRun(ledger, resolveRun(ledger, ref)) };
}

/** A pid still counts only together with its start time (a reused pid is someone else). */
export interface MergeOptions {
  readonly yes?: boolean;
  readonly commit?: boolean;
  readonly json?: boolean;
  /** With --yes: apply a patch with sensitive changes too (the prompt shows them instead). */
  readonly allowSensitive?: boolean;
  /** The person applied the change by hand: only record MERGED. */
  readonly markMerged?: boolean;
}

/**
 * `agentbox merge <run>`: shows the diffstat and the sensitive changes, asks (or takes --yes, which
 * needs --allow-sensitive for sensitive changes), applies changes.patch to the main working tree
 * all or nothing, and records MERGED. A patch that does not apply, or that has a change agentbox
 * refuses (a symlink out of the repository), leaves the tree exactly as it was.
 */
export async function merge(ctx: CommandContext, ref: string, options: MergeOptions): Promise<number> {
  assertHuman(ctx.env, 'merge', ctx.cwd);
  const { root, run } = await openRun(ctx, ref);
  const state = run.state;
  const name = run.name;
  if (run.meta.type !== 'fix') {
    throw new AgentboxError('USAGE', `run ${name} is a ${run.meta.type} run: it has no changes to merge`, {
      hint: 'only fix runs produce changes.patch',
    });
  }
  if (state?.status === 'MERGED') throw new AgentboxError('USAGE', `run ${name} is already merged`);
  if (state?.status === 'DISCARDED')
    throw new AgentboxError('USAGE', `run ${name} was discarded; its patch is kept in ${run.dir}`);
  if (state?.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${name} is still running`, {
      hint: 'wait for it to end (agentbox status), then merge',
    });
  }
  const patch = path.join(run.dir, 'changes.patch');
  if (!fs.existsSync(patch) || fs.statSync(patch).size === 0) {
    throw new AgentboxError('USAGE', `run ${name} has no changes to merge (no changes.patch)`, {
      hint: `see what it did: agentbox show ${run.meta.run_id}`,
    });
  }
  if (options.markMerged) return markMerged(ctx, root, run, options);
  const stat = await patchStat(root, patch);
  const check = await checkPatch(root, patch);
  if (!check.ok) {
    const edited = await locallyChanged(root, check.conflicts);
    throw new AgentboxError(
      'MERGE_CONFLICT',
      `the changes of ${name} do not apply to ${root}: conflicts in ${check.conflicts.join(', ') || '(see below)'}\n${check.message.trim()}`,
      { hint: conflictHint(run.meta.run_id, patch, edited) },
    );
  }
  const { sensitive, refused } = await inspectPatchFile(root, patch);
  if (refused.length > 0) {
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${name}: agentbox never applies these changes\n${sensitiveLines(refused).join('\n')}`,
      {
        hint: `nothing was changed. Discard the run (agentbox discard ${run.meta.run_id}), or take what you trust from ${patch} by hand`,
      },
    );
  }
  if (sensitive.length > 0 && options.yes && !options.allowSensitive) {
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${name} with --yes: it has ${sensitive.length} sensitive change(s)\n${sensitiveLines(sensitive).join('\n')}`,
      {
        hint: `nothing was changed. Review them (agentbox show ${run.meta.run_id}), then: agentbox merge ${run.meta.run_id} --yes --allow-sensitive`,
      },
    );
  }
  const s = styler(ctx.io);
  if (!options.json) {
    ctx.io.out(`${s.bold(name)}: ${run.meta.task.split('\n')[0]}\n${stat.trimEnd()}\n`);
    if (sensitive.length > 0) ctx.io.out(`\n${sensitiveBlock(sensitive, s.warn)}`);
  }
  if (!options.yes) {
    if (!ctx.io.ask) {
      throw new AgentboxError('USAGE', 'refusing to merge without a confirmation', {
        hint: `run it in a terminal to be asked, or pass --yes: agentbox merge ${run.meta.run_id} --yes`,
      });
    }
    const which = sensitive.length > 0 ? `, the ${sensitive.length} sensitive one(s) included,` : '';
    // `d` shows the whole diff (through the pager) and asks again.
    let answer = '';
    for (;;) {
      answer = (await ctx.io.ask(`Apply these changes${which} to ${root}? [y/N/d = show the diff] `)).trim();
      if (!/^d(iff)?$/i.test(answer)) break;
      await showDiff(ctx, root, run, {});
    }
    if (!/^y(es)?$/i.test(answer)) {
      ctx.io.out('Nothing changed.\n');
      return 1;
    }
  }
  const { files } = await applyPatch(root, patch);
  // `files` has both sides of a rename; people count the patch's entries.
  const changed = fs
    .readFileSync(patch, 'latin1')
    .split('\n')
    .filter((l) => l.startsWith('diff --git ')).length;
  // NOTE: a patch that touches a hook (or what a hook manager reads) commits with no hook at all:
  // git would otherwise run the run's own code the moment the person commits it.
  const hookFiles = [...new Set(sensitive.filter((c) => c.kind === 'hooks').map((c) => c.path))];
  const hooks = hookFiles.length === 0;
  let commit: string | null = null;
  if (options.commit) commit = await commitFiles(root, files, commitMessage(name, run.meta.task), { hooks });
  const ledger = openLedger(root);
  const accepted = sensitive.length > 0 ? ` · ${sensitive.length} sensitive change(s) accepted` : '';
  await updateState(
    ledger,
    name,
    { status: 'MERGED' },
    {
      event: 'merged',
      detail: `${commit ? `commit ${commit}${hooks ? '' : ' (hooks not run)'}` : `${files.length} file(s)`}${accepted}`,
    },
  );
  if (options.json) {
    const hooksRan = commit ? hooks : null;
    ctx.io.out(
      `${JSON.stringify({ run: name, status: 'MERGED', files, commit, hooksRan, sensitive, refused })}\n`,
    );
  } else {
    ctx.io.out(
      `${s.ok('✓')} merged ${changed} file(s) into ${root}${commit ? ` — commit ${commit.slice(0, 12)}` : ' (not committed)'}\n`,
    );
    if (commit && !hooks)
      ctx.io.out(`  git hooks were not run for this commit: the patch changes ${hookFiles.join(', ')}\n`);
    ctx.io.out(`  next: ${mergedNext(Boolean(commit), run.meta.run_id)}\n`);
  }
  return 0;
}

/**
 * `merge --mark-merged`: the person merged the change by hand (after a conflict, or part of it):
 * the run is recorded MERGED and nothing in the working tree is touched.
 */
async function markMerged(
  ctx: CommandContext,
  root: string,
  run: RunDetails,
  options: MergeOptions,
): Promise<number> {
  if (options.commit || options.yes || options.allowSensitive) {
    throw new AgentboxError(
      'USAGE',
      '--mark-merged changes no file: it takes no --commit, --yes or --allow-sensitive',
      {
        hint: `agentbox merge ${run.meta.run_id} --mark-merged`,
      },
    );
  }
  await updateState(
    openLedger(root),
    run.name,
    { status: 'MERGED' },
    { event: 'merged', detail: 'marked merged by hand' },
  );
  if (options.json) ctx.io.out(`${JSON.stringify({ run: run.name, status: 'MERGED', byHand: true })}\n`);
  else {
    ctx.io.out(`${styler(ctx.io).ok('✓')} recorded ${run.name} as merged (by hand; nothing was applied)\n`);
    ctx.io.out(`  next: ${mergedNext(true, run.meta.run_id)}\n`);
  }
  return 0;
}

/** Which of `files` have uncommitted changes in the working tree or index. */
async function locallyChanged(root: string, files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const status = await execa(
    'git',
    ['--literal-pathspecs', 'status', '--porcelain=v1', '-z', '--', ...files],
    {
      cwd: root,
      reject: false,
    },
  );
  if (status.exitCode !== 0) return [];
  return status.stdout
    .split('\0')
    .filter((entry) => /^(?:[MADRCU ][MADRCU ]|\?\?) /.test(entry))
    .map((entry) => entry.slice(3));
}

/**
 * What to do when the patch does not apply, pure: a file the person is editing must be committed
 * or stashed first (`git apply --3way` refuses a file that does not match the index too); a file
 * that changed in a commit since the run started is merged by hand with --3way, then recorded.
 */
export function conflictHint(runId: string, patch: string, edited: readonly string[]): string {
  const byHand = `or merge by hand (git apply --3way ${patch}, resolve the conflict markers), then: agentbox merge ${runId} --mark-merged`;
  if (edited.length > 0) {
    return (
      `nothing was changed. You have uncommitted changes in ${edited.join(', ')}: commit them, or stash them ` +
      `(git stash), run agentbox merge ${runId} again, then git stash pop; ${byHand}`
    );
  }
  return `nothing was changed. Those files changed here since the run started: ${byHand}; or discard the run (agentbox discard ${runId})`;
}

/** What a person does after a merge: test, commit (unless merge did), clean up. Pure. */
export function mergedNext(committed: boolean, runId: string): string {
  return [
    'run your tests',
    ...(committed ? [] : ['commit the change (git add -p && git commit)']),
    `remove the run's worktree and branch: agentbox discard ${runId} (or agentbox gc)`,
  ].join('; then ');
}

/** The list merge prints before it asks. Pure. */
export function sensitiveBlock(
  changes: readonly SensitiveChange[],
  warn: (text: string) => string = (t) => t,
): string {
  const title = `sensitive changes (${changes.length}): agent config, git files, CI, hooks, executables, symlinks`;
  return `${warn(title)}\n${sensitiveLines(changes).join('\n')}\n\n`;
}

/** The commit `merge --commit` makes (see src/run/result-message.ts). */
export const commitMessage = mergeMessage;

/** `agentbox discard <run>`: removes the worktree and its branch, keeps the run folder and patch. */
export async function discard(
  ctx: CommandContext,
  ref: string,
  options: { json?: boolean },
): Promise<number> {
  assertHuman(ctx.env, 'discard', ctx.cwd);
  const { root, run } = await openRun(ctx, ref);
  const state = run.state;
  if (state?.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${run.name} is still running`, {
      hint: `stop it first (agentbox stop ${run.meta.run_id}, or Ctrl-C in its terminal), then discard it`,
    });
  }
  let removed = { removedWorktree: false, deletedBranch: false };
  if (state?.worktree_path) {
    removed = await removeWorktree(root, {
      path: state.worktree_path,
      branch: state.branch,
      deleteBranch: true,
    });
  }
  const ledger = openLedger(root);
  // A merged run stays MERGED: discarding it only clears its worktree and branch away.
  const already = state?.status === 'DISCARDED' || state?.status === 'MERGED';
  if (!already) await updateState(ledger, run.name, { status: 'DISCARDED' }, { event: 'discarded' });
  else if (removed.removedWorktree) await updateState(ledger, run.name, {}, { event: 'worktree_removed' });
  if (options.json)
    ctx.io.out(
      `${JSON.stringify({ run: run.name, status: state?.status === 'MERGED' ? 'MERGED' : 'DISCARDED', ...removed })}\n`,
    );
  else {
    const what = [
      removed.removedWorktree && 'worktree',
      removed.deletedBranch && `branch ${state?.branch}`,
    ].filter(Boolean);
    ctx.io.out(
      `${state?.status === 'MERGED' ? 'cleaned up merged run' : already ? 'already discarded' : 'discarded'} ${run.name}${what.length ? ` — removed ${what.join(' and ')}` : ''}\n` +
        `  kept ${path.relative(root, run.dir)}/ (report${fs.existsSync(path.join(run.dir, 'changes.patch')) ? ' and changes.patch' : ''})\n`,
    );
  }
  return 0;
}
