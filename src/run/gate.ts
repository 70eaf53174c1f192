import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext, Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { type SensitiveChange, sensitiveLines } from '../git/sensitive.js';
import { openLedger, type RunDetails, readRun, resolveRun, updateState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { styler } from '../util/style.js';

export { isAlive };

import { type InsideRun, insideRun, procReader } from '../airlock/inside.js';
import { showDiff } from '../review/diff.js';
import { findLedgerRoot } from '../watchdog/watchdog.js';
import { EventLog } from './events.js';
import { applyMerge, discardRun, mergeablePatch, prepareMerge } from './merge.js';
import { mergeMessage } from './result-message.js';

export { conflictHint } from './merge.js';

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
 * all or nothing, and records MERGED. The checks and the merge itself are src/run/merge.ts; this
 * confirms and prints.
 */
export async function merge(ctx: CommandContext, ref: string, options: MergeOptions): Promise<number> {
  assertHuman(ctx.env, 'merge', ctx.cwd);
  const { root, run } = await openRun(ctx, ref);
  if (options.markMerged) {
    mergeablePatch(run);
    return markMerged(ctx, root, run, options);
  }
  const plan = await prepareMerge(root, run);
  const { sensitive } = plan;
  const name = run.name;
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
    ctx.io.out(`${s.bold(name)}: ${run.meta.task.split('\n')[0]}\n${plan.stat.trimEnd()}\n`);
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
  const done = await applyMerge(plan, { commit: options.commit === true });
  if (options.json) {
    // A patch with a refused change never gets here: `refused` is always empty.
    ctx.io.out(
      `${JSON.stringify({ run: name, status: 'MERGED', files: done.files, commit: done.commit, hooksRan: done.hooksRan, sensitive, refused: [] })}\n`,
    );
  } else {
    ctx.io.out(
      `${s.ok('✓')} merged ${done.changed} file(s) into ${root}${done.commit ? ` — commit ${done.commit.slice(0, 12)}` : ' (not committed)'}\n`,
    );
    if (done.commit && done.hooksRan === false)
      ctx.io.out(
        `  git hooks were not run for this commit: the patch changes ${done.hookFiles.join(', ')}\n`,
      );
    ctx.io.out(`  next: ${mergedNext(Boolean(done.commit), run.meta.run_id)}\n`);
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
  options: { json?: boolean; remote?: boolean | string },
): Promise<number> {
  assertHuman(ctx.env, 'discard', ctx.cwd);
  const { root, run } = await openRun(ctx, ref);
  const done = await discardRun(root, run);
  const unpublished = options.remote
    ? await (await import('../remote/share.js')).unpublishRun(
        openLedger(root),
        run.meta,
        options.remote,
        ctx.env,
      )
    : null;
  if (options.json)
    ctx.io.out(
      `${JSON.stringify({ run: run.name, status: done.status, removedWorktree: done.removedWorktree, deletedBranch: done.deletedBranch, ...(unpublished ? { remote: unpublished } : {}) })}\n`,
    );
  else {
    const what = [done.removedWorktree && 'worktree', done.deletedBranch && `branch ${done.branch}`].filter(
      Boolean,
    );
    ctx.io.out(
      `${done.status === 'MERGED' ? 'cleaned up merged run' : done.already ? 'already discarded' : 'discarded'} ${run.name}${what.length ? ` — removed ${what.join(' and ')}` : ''}\n` +
        `  kept ${path.relative(root, run.dir)}/ (report${fs.existsSync(path.join(run.dir, 'changes.patch')) ? ' and changes.patch' : ''})\n`,
    );
    if (unpublished)
      ctx.io.out(
        `  ${unpublished.remote}: ${unpublished.deleted.length ? `deleted ${unpublished.deleted.join(' and ')}` : 'held none of its refs'}\n`,
      );
  }
  return 0;
}
