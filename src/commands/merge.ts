import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import {
  applyMerge,
  type MergePlan,
  type MergeResult,
  mergeablePatch,
  prepareMerge,
  recordMergedByHand,
} from '../gate/merge.js';
import { type NotPassing, notPassingLine } from '../gate/merge-gate.js';
import { RUN_HOOKS } from '../gate/merge-git.js';
import { type SensitiveChange, sensitiveLines } from '../git/sensitive.js';
import { EventLog } from '../ledger/events.js';
import type { RunDetails } from '../ledger/index.js';
import { nestedLines } from '../present/nested.js';
import { mergeMessage } from '../present/result-message.js';
import { showDiff } from '../review/diff.js';
import { styler } from '../util/style.js';
import { terminalExact, terminalLine, terminalName } from '../util/terminal-text.js';
import { type MergeOptions, mergeGroup, mergeTarget } from './merge-group.js';

export type { MergeOptions };

/**
 * `agentbox merge <run>`: shows the diffstat and the sensitive changes, asks (or takes --yes, which
 * needs --allow-sensitive for sensitive changes), applies changes.patch to the main working tree
 * all or nothing, and records MERGED. The checks and the merge itself are src/gate/merge.ts (the web
 * UI calls them too); this confirms and prints.
 */
export async function merge(ctx: CommandContext, ref: string, options: MergeOptions): Promise<number> {
  assertHuman(ctx.env, 'merge', ctx.cwd);
  const target = await mergeTarget(ctx, ref, options.attempt);
  if (target.group)
    return mergeGroup(ctx, target, options, { mergeRun, printMerged, recordByHand, printByHand });
  const { root, run } = target;
  if (options.markMerged) return markMerged(ctx, root, run, options);
  const merged = await mergeRun(ctx, root, run, options);
  if (!merged) return 1;
  printMerged(ctx, merged.plan, merged.done, options.json === true);
  return 0;
}

/**
 * One run through the gate: the checks, what the person sees before deciding, their answer, the
 * merge. null: they said no (nothing changed). A group's merge takes its attempt through here too.
 */
async function mergeRun(
  ctx: CommandContext,
  root: string,
  run: RunDetails,
  options: MergeOptions,
): Promise<{ plan: MergePlan; done: MergeResult } | null> {
  const plan = await prepareMerge(root, run);
  const { sensitive } = plan;
  if (plan.notPassing && options.yes && !options.force) refuseNotPassing(run, plan.notPassing);
  if (sensitive.length > 0 && options.yes && !options.allowSensitive) {
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${run.name} with --yes: it has ${sensitive.length} sensitive change(s)\n${sensitiveLines(sensitive).map(terminalLine).join('\n')}`,
      {
        hint: `nothing was changed. Review them (agentbox show ${run.meta.run_id}), then: agentbox merge ${run.meta.run_id} --yes --allow-sensitive`,
      },
    );
  }
  const s = styler(ctx.io);
  if (!options.json) {
    // The run's status comes first: a person deciding on the diff must know it did not pass.
    if (plan.notPassing)
      ctx.io.out(`${s.bad(`✗ this run did not pass: ${notPassingLine(plan.notPassing)}`)}\n\n`);
    // git's stat and summary ("create mode …") name the agent's files as they are: shown exact.
    ctx.io.out(
      `${s.bold(run.name)}: ${terminalLine(run.meta.task.split('\n')[0] ?? '')}\n${terminalExact(plan.stat).trimEnd()}\n`,
    );
    if (sensitive.length > 0) ctx.io.out(`\n${sensitiveBlock(sensitive, s.warn)}`);
    if (plan.nested.length > 0) ctx.io.out(`\n${nestedLines(plan.nested, s.warn).join('\n')}\n`);
  }
  if (!options.yes && !(await confirmed(ctx, plan))) {
    ctx.io.out('Nothing changed.\n');
    return null;
  }
  return { plan, done: await applyMerge(plan, { commit: options.commit === true }) };
}

/** `merge --yes` on a run that did not pass: refused (and logged) unless --force. */
function refuseNotPassing(run: RunDetails, np: NotPassing): never {
  new EventLog(run.dir).append({ event: 'merge_refused', reason: 'not_passing', detail: notPassingLine(np) });
  const id = run.meta.run_id;
  throw new AgentboxError(
    'MERGE_REFUSED',
    `refusing to merge ${run.name} with --yes: it did not pass: ${notPassingLine(np)}`,
    {
      hint: `nothing was changed. See why: agentbox show ${id}; to merge it anyway, pass --force: agentbox merge ${id} --yes --force`,
    },
  );
}

/** Asks the person; `d` shows the whole diff (through the pager) and asks again. */
async function confirmed(ctx: CommandContext, plan: MergePlan): Promise<boolean> {
  const { root, run, sensitive } = plan;
  if (!ctx.io.ask) {
    throw new AgentboxError('USAGE', 'refusing to merge without a confirmation', {
      hint: `run it in a terminal to be asked, or pass --yes: agentbox merge ${run.meta.run_id} --yes`,
    });
  }
  const which = sensitive.length > 0 ? `, the ${sensitive.length} sensitive one(s) included,` : '';
  const of = plan.notPassing ? ` of a run that did not pass (${plan.notPassing.status})` : '';
  let answer = '';
  for (;;) {
    answer = (
      await ctx.io.ask(`Apply these changes${of}${which} to ${root}? [y/N/d = show the diff] `)
    ).trim();
    if (!/^d(iff)?$/i.test(answer)) break;
    await showDiff(ctx, root, run, {});
  }
  return /^y(es)?$/i.test(answer);
}

/** `extra`: what a group's merge adds to the JSON object (its settling). */
export function printMerged(
  ctx: CommandContext,
  plan: MergePlan,
  done: MergeResult,
  json: boolean,
  extra: Record<string, unknown> = {},
): void {
  const { root, run, sensitive } = plan;
  if (json) {
    // A patch with a refused change never gets here: `refused` is always empty.
    ctx.io.out(
      `${JSON.stringify({ run: run.name, status: 'MERGED', files: done.files, commit: done.commit, hooksRan: done.hooksRan, hooksNotRun: done.hooksNotRun, unfiltered: done.unfiltered, sensitive, refused: [], ...extra })}\n`,
    );
    return;
  }
  ctx.io.out(
    `${styler(ctx.io).ok('✓')} merged ${done.changed} file(s) into ${root}${done.commit ? ` — commit ${done.commit.slice(0, 12)}` : ' (not committed)'}\n`,
  );
  for (const line of gitLines(done, plan.git.hooks)) ctx.io.out(`  ${line}\n`);
  ctx.io.out(
    `  next: ${mergedNext(Boolean(done.commit), run.meta.run_id, done.commit ? [] : plan.git.hooks)}\n`,
  );
}

/**
 * What the person's git did not run (src/gate/merge-git.ts): their hooks for merge's commit, with
 * the command that runs them — unless the patch changes a hook, which that would run too — and
 * files a filter of theirs would have taken. Pure.
 */
export function gitLines(
  done: Pick<MergeResult, 'commit' | 'hooksNotRun' | 'hooksDir' | 'hookFiles' | 'unfiltered'>,
  hooks: readonly string[],
): string[] {
  const lines: string[] = [];
  if (done.commit && done.hooksNotRun.length > 0)
    lines.push(
      `your git hooks did not run for this commit: ${done.hooksNotRun.join(', ')} (${terminalName(done.hooksDir)})`,
    );
  if (done.hookFiles.length > 0) {
    const files = done.hookFiles.map(terminalName).join(', ');
    lines.push(`the patch changes hook files: ${files}; read them before a commit runs them`);
  } else if (done.commit && hooks.length > 0) {
    lines.push(`they may run the files the run wrote, as you; once you have read them: ${RUN_HOOKS}`);
  }
  if (done.unfiltered.length > 0)
    lines.push(
      `not run through your git filters: ${done.unfiltered.map((f) => `${terminalName(f.path)} (${terminalLine(f.driver)})`).join(', ')}`,
    );
  return lines;
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
  await recordByHand(root, run, options);
  printByHand(ctx, run, options.json === true);
  return 0;
}

export async function recordByHand(root: string, run: RunDetails, options: MergeOptions): Promise<void> {
  mergeablePatch(run);
  if (options.commit || options.yes || options.allowSensitive || options.force) {
    throw new AgentboxError(
      'USAGE',
      '--mark-merged changes no file: it takes no --commit, --yes, --allow-sensitive or --force',
      {
        hint: `agentbox merge ${run.meta.run_id} --mark-merged`,
      },
    );
  }
  await recordMergedByHand(root, run);
}

export function printByHand(
  ctx: CommandContext,
  run: RunDetails,
  json: boolean,
  extra: Record<string, unknown> = {},
): void {
  if (json) ctx.io.out(`${JSON.stringify({ run: run.name, status: 'MERGED', byHand: true, ...extra })}\n`);
  else {
    ctx.io.out(`${styler(ctx.io).ok('✓')} recorded ${run.name} as merged (by hand; nothing was applied)\n`);
    ctx.io.out(`  next: ${mergedNext(true, run.meta.run_id)}\n`);
  }
}

/**
 * What a person does after a merge: test, commit (unless merge did: naming the person's `hooks`
 * their commit runs), clean up. Pure.
 */
export function mergedNext(committed: boolean, runId: string, hooks: readonly string[] = []): string {
  const run =
    hooks.length > 0
      ? `; your ${hooks.join(', ')} hook${hooks.length > 1 ? 's run' : ' runs'} then, as you, on these files`
      : '';
  return [
    'run your tests',
    ...(committed ? [] : [`commit the change (git add -p && git commit${run})`]),
    `remove the run's worktree and branch: agentbox discard ${runId} (or agentbox gc)`,
  ].join('; then ');
}

/** The list merge prints before it asks. Pure. */
export function sensitiveBlock(
  changes: readonly SensitiveChange[],
  warn: (text: string) => string = (t) => t,
): string {
  const title = `sensitive changes (${changes.length}): agent config, git files, CI, hooks, executables, symlinks`;
  return `${warn(title)}\n${sensitiveLines(changes).map(terminalLine).join('\n')}\n\n`;
}

/** The commit `merge --commit` makes (see src/present/result-message.ts). */
export const commitMessage = mergeMessage;
