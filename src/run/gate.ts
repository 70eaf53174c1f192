import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext, Env } from '../cli/context.js';
import { styler } from '../cli/style.js';
import { AgentboxError } from '../errors.js';
import { applyPatch, checkPatch, commitFiles, patchStat } from '../git/apply.js';
import { findRepo } from '../git/repo.js';
import { removeWorktree } from '../git/worktree.js';
import { openLedger, type RunDetails, readRun, resolveRun, updateState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';

export { isAlive };

import { EventLog } from './events.js';

/**
 * The human gate refuses to run inside an agent. Claude Code marks the processes it starts with
 * CLAUDECODE=1 and agentbox marks its runs' processes with AGENTBOX_RUN; the hooks and deny rules
 * stop `agentbox merge` before it starts, this stops it if it started anyway (`A=merge; agentbox $A`).
 */
export function assertHuman(env: Env, command: string): void {
  const inside = env.AGENTBOX_RUN
    ? `agentbox run ${env.AGENTBOX_RUN}`
    : env.CLAUDECODE
      ? 'a Claude Code session'
      : null;
  if (inside) {
    const reason = `agentbox ${command} is the human gate and does not run inside ${inside}`;
    // The run that tried it records the attempt; its end-of-run report lists it as refused.
    if (env.AGENTBOX_RUN_DIR)
      new EventLog(env.AGENTBOX_RUN_DIR).append({ event: 'human_gate_refused', command, reason });
    throw new AgentboxError('HUMAN_GATE', reason, {
      hint: `run it yourself in a terminal: agentbox ${command} <run>`,
    });
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
}

/**
 * `agentbox merge <run>`: shows the diffstat, asks (or takes --yes), applies changes.patch to the
 * main working tree all or nothing, and records MERGED. A patch that does not apply leaves the
 * tree exactly as it was and names the conflicting files.
 */
export async function merge(ctx: CommandContext, ref: string, options: MergeOptions): Promise<number> {
  assertHuman(ctx.env, 'merge');
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
      hint: `see what it did: agentbox show ${name}`,
    });
  }
  const stat = await patchStat(root, patch);
  const check = await checkPatch(root, patch);
  if (!check.ok) {
    throw new AgentboxError(
      'MERGE_CONFLICT',
      `the changes of ${name} do not apply to ${root}: conflicts in ${check.conflicts.join(', ') || '(see below)'}\n${check.message.trim()}`,
      { hint: `nothing was changed. Resolve by hand (git apply --3way ${patch}), or discard the run` },
    );
  }
  const s = styler(ctx.io);
  if (!options.json) ctx.io.out(`${s.bold(name)}: ${run.meta.task.split('\n')[0]}\n${stat.trimEnd()}\n`);
  if (!options.yes) {
    if (!ctx.io.ask) {
      throw new AgentboxError('USAGE', 'refusing to merge without a confirmation', {
        hint: `run it in a terminal to be asked, or pass --yes: agentbox merge ${name} --yes`,
      });
    }
    const answer = await ctx.io.ask(`Apply these changes to ${root}? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) {
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
  let commit: string | null = null;
  if (options.commit) commit = await commitFiles(root, files, commitMessage(name, run.meta.task));
  const ledger = openLedger(root);
  await updateState(
    ledger,
    name,
    { status: 'MERGED' },
    { event: 'merged', detail: commit ? `commit ${commit}` : `${files.length} file(s)` },
  );
  if (options.json) ctx.io.out(`${JSON.stringify({ run: name, status: 'MERGED', files, commit })}\n`);
  else
    ctx.io.out(
      `${s.ok('✓')} merged ${changed} file(s) into ${root}${commit ? ` — commit ${commit.slice(0, 12)}` : ' (not committed)'}\n`,
    );
  return 0;
}

export function commitMessage(name: string, task: string): string {
  // NOTE: cut by code points, not UTF-16 units: slicing through an emoji left half a surrogate
  // pair, which reaches git as U+FFFD. `\r?\n` and the trim keep a CRLF task's `\r` out of it.
  const first = [...(task.trim().split(/\r?\n/)[0] ?? '').trim()];
  const subject = first.length > 72 ? `${first.slice(0, 71).join('')}…` : first.join('');
  return `${subject}\n\nMerged from agentbox run ${name}.\n\nTask:\n${task.trim()}\n`;
}

/** `agentbox discard <run>`: removes the worktree and its branch, keeps the run folder and patch. */
export async function discard(
  ctx: CommandContext,
  ref: string,
  options: { json?: boolean },
): Promise<number> {
  assertHuman(ctx.env, 'discard');
  const { root, run } = await openRun(ctx, ref);
  const state = run.state;
  if (state?.status === 'ACTIVE' && isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${run.name} is still running`, {
      hint: 'stop it first (Ctrl-C in its terminal), then discard it',
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
