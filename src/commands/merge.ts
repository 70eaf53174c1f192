import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { claimedRunLine, claimLine } from '../gate/claims.js';
import { assertHuman } from '../gate/gate.js';
import { applyMerge, type MergePlan, type MergeResult, prepareMerge } from '../gate/merge.js';
import { type NotPassing, notPassingLine } from '../gate/merge-gate.js';
import { RUN_HOOKS } from '../gate/merge-git.js';
import { changedSinceLine, patchSeen } from '../gate/patch-seen.js';
import { verifyHere } from '../gate/verify-here.js';
import type { Uncommitted } from '../git/commit-patch.js';
import { type SensitiveChange, sensitiveLines } from '../git/sensitive.js';
import { EventLog } from '../ledger/events.js';
import type { RunDetails } from '../ledger/index.js';
import { outsidePatchLines } from '../present/left-out.js';
import { mergeMessage } from '../present/result-message.js';
import { showDiff } from '../review/diff.js';
import { terminalJson } from '../util/json-out.js';
import { styler } from '../util/style.js';
import { terminalExact, terminalLine, terminalName } from '../util/terminal-text.js';
import { markMerged, mergedNext, printByHand, recordByHand } from './merge-by-hand.js';
import { type MergeOptions, mergeGroup, mergeTarget } from './merge-group.js';

export type { MergeOptions };
export { mergedNext };

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
  as: string = run.meta.run_id,
): Promise<{ plan: MergePlan; done: MergeResult } | null> {
  const plan = await prepareMerge(root, run);
  const { sensitive } = plan;
  // The patch first: --force takes a claim or a failed check, never a patch nobody was shown.
  if (plan.seen.changed && options.yes) refuseChanged(run, plan);
  // A fetched run's claims are checked here (runs.verify in a box), or taken with --force.
  if (plan.claim && options.yes && !options.force)
    await checkClaim(ctx, run, plan, options.json === true, as);
  if (plan.notPassing && options.yes && !options.force) refuseNotPassing(run, plan.notPassing, as);
  if (sensitive.length > 0 && options.yes && !options.allowSensitive) {
    throw new AgentboxError(
      'MERGE_REFUSED',
      `refusing to merge ${run.name} with --yes: it has ${sensitive.length} sensitive change(s)\n${sensitiveLines(sensitive).map(terminalLine).join('\n')}`,
      {
        hint: `nothing was changed. Review them (agentbox show ${run.meta.run_id}), then: agentbox merge ${as} --yes --allow-sensitive`,
      },
    );
  }
  const s = styler(ctx.io);
  if (!options.json) {
    // The run's status comes first: a person deciding on the diff must know it did not pass, and
    // whether anyone here checked that it did.
    if (plan.claim) ctx.io.out(`${s.warn(`! ${claimedRunLine(plan.claim)}`)}\n`);
    if (plan.notPassing)
      ctx.io.out(
        `${s.bad(`✗ this run ${plan.claim ? 'claims it ' : ''}did not pass: ${notPassingLine(plan.notPassing)}`)}\n`,
      );
    if (plan.seen.changed) ctx.io.out(`${s.bad(`✗ ${changedSinceLine(plan.seen)}`)}\n`);
    if (plan.claim || plan.notPassing || plan.seen.changed) ctx.io.out('\n');
    // git's stat and summary ("create mode …") name the agent's files as they are: shown exact.
    ctx.io.out(
      `${s.bold(run.name)}: ${terminalLine(run.meta.task.split('\n')[0] ?? '')}\n${terminalExact(plan.stat).trimEnd()}\n`,
    );
    ctx.io.out(`${s.dim(`patch sha256 ${plan.sha256}`)}\n`);
    if (sensitive.length > 0) ctx.io.out(`\n${sensitiveBlock(sensitive, s.warn)}`);
    const outside = outsidePatchLines(plan, s.warn);
    if (outside.length > 0) ctx.io.out(`\n${outside.join('\n')}\n`);
  }
  if (!options.yes && !(await confirmed(ctx, plan, as))) {
    ctx.io.out('Nothing changed.\n');
    return null;
  }
  return { plan, done: await applyMerge(plan, { commit: options.commit === true }) };
}

/**
 * `merge --yes` of a fetched run: what it claims is not believed. runs.verify runs here, in a box,
 * on the patch applied to HEAD (src/gate/verify-here.ts); the merge goes on only when it passes.
 * Without a runs.verify to run, or when it fails, refused (and logged) unless --force.
 */
async function checkClaim(
  ctx: CommandContext,
  run: RunDetails,
  plan: MergePlan,
  json: boolean,
  as: string,
): Promise<void> {
  const claim = plan.claim!;
  const say = (text: string) => (json ? ctx.io.err(text) : ctx.io.out(text));
  const checked = await verifyHere(plan, ctx.env, () => {
    say(`${run.name} ${claimedRunLine(claim)}\n`);
    say('checking it here: runs.verify, in a box, on the patch applied to HEAD…\n');
  });
  if (checked.kind === 'passed') {
    say(`${styler(ctx.io).ok('✓')} ${terminalLine(checked.command)} passed here (${checked.log})\n`);
    return;
  }
  const why =
    checked.kind === 'none'
      ? checked.why
      : `${terminalLine(checked.command)} ${terminalLine(checked.detail)} here`;
  new EventLog(run.dir).append({
    event: 'merge_refused',
    reason: 'claimed',
    detail: `${claimLine(claim)}; ${why}`,
  });
  const id = run.meta.run_id;
  throw new AgentboxError(
    'MERGE_REFUSED',
    `refusing to merge ${run.name} with --yes: it ${claimedRunLine(claim)}, and it could not be checked here: ${why}`,
    {
      hint: `nothing was changed.${checked.kind === 'failed' ? ` Its output: ${checked.log}.` : ''} Read its patch (agentbox diff ${id}) and merge it when asked (agentbox merge ${as}); or take the claim as it is: agentbox merge ${as} --yes --force`,
    },
  );
}

/** `merge --yes` of a patch that is not the one last shown: refused (and logged), --force or not. */
function refuseChanged(run: RunDetails, plan: MergePlan): never {
  const line = changedSinceLine(plan.seen);
  new EventLog(run.dir).append({ event: 'merge_refused', reason: 'patch_changed', detail: line });
  const id = run.meta.run_id;
  throw new AgentboxError('MERGE_REFUSED', `refusing to merge ${run.name} with --yes: ${line}`, {
    hint: `nothing was changed. See the patch it has now (agentbox diff ${id}), then merge again`,
  });
}

/** `merge --yes` on a run that did not pass: refused (and logged) unless --force. */
function refuseNotPassing(run: RunDetails, np: NotPassing, as: string): never {
  new EventLog(run.dir).append({ event: 'merge_refused', reason: 'not_passing', detail: notPassingLine(np) });
  const id = run.meta.run_id;
  throw new AgentboxError(
    'MERGE_REFUSED',
    `refusing to merge ${run.name} with --yes: it did not pass: ${notPassingLine(np)}`,
    {
      hint: `nothing was changed. See why: agentbox show ${id}; to merge it anyway, pass --force: agentbox merge ${as} --yes --force`,
    },
  );
}

/** Asks the person; `d` shows the whole diff (through the pager) and asks again. */
async function confirmed(ctx: CommandContext, plan: MergePlan, as: string): Promise<boolean> {
  const { root, run, sensitive } = plan;
  if (!ctx.io.ask) {
    // A patch not shown since it changed: --yes refuses it too (refuseChanged), so diff comes first.
    throw new AgentboxError('USAGE', 'refusing to merge without a confirmation', {
      hint: plan.seen.changed
        ? `the patch changed since it was last shown here: see it first (agentbox diff ${run.meta.run_id}), then merge: agentbox merge ${as} in a terminal, or agentbox merge ${as} --yes`
        : `run it in a terminal to be asked, or pass --yes: agentbox merge ${as} --yes`,
    });
  }
  const which = sensitive.length > 0 ? `, the ${sensitive.length} sensitive one(s) included,` : '';
  const of = plan.notPassing ? ` of a run that did not pass (${plan.notPassing.status})` : '';
  // The host is the publication's word: a stranger's text, as the rest of the claim.
  const claimed = plan.claim
    ? ` (${terminalLine(`${plan.claim.host} claims ${plan.claim.status}`)}, not checked here)`
    : '';
  // A patch that changed since the person saw it is shown again before a yes counts.
  let unseen = plan.seen.changed;
  let answer = '';
  for (;;) {
    answer = (
      await ctx.io.ask(
        `Apply these changes${of}${claimed}${which} to ${root} (${terminalLine(plan.onto)})? [${unseen ? 'd = show the new patch first' : 'y/N/d = show the diff'}] `,
      )
    ).trim();
    if (/^d(iff)?$/i.test(answer)) {
      await showDiff(ctx, root, run, { shownBy: 'merge' });
      // Seen when what the diff showed (it records the hash it showed) is the patch to apply.
      unseen = patchSeen(run.dir)?.shown?.sha256 !== plan.sha256;
      continue;
    }
    if (!unseen || !/^y(es)?$/i.test(answer)) break;
    ctx.io.out('The patch changed since you last saw it: show it first (d).\n');
  }
  return /^y(es)?$/i.test(answer) && !unseen;
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
      `${terminalJson({ run: run.name, status: 'MERGED', files: done.files, commit: done.commit, uncommitted: done.uncommitted, hooksRan: done.hooksRan, hooksNotRun: done.hooksNotRun, unfiltered: done.unfiltered, sensitive, refused: [], patch_sha256: done.patch_sha256, claim: plan.claim, ...extra })}\n`,
    );
    return;
  }
  ctx.io.out(
    `${styler(ctx.io).ok('✓')} merged ${done.changed} file(s) into ${root} (${terminalLine(plan.onto)})${done.commit ? ` — commit ${done.commit.slice(0, 12)}` : ' (not committed)'}\n`,
  );
  ctx.io.out(`  patch sha256 ${done.patch_sha256}\n`);
  for (const line of uncommittedLines(done.uncommitted)) ctx.io.out(`  ${line}\n`);
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

/** The person's own edits in merged files, which `--commit` left out of its commit. Pure. */
export function uncommittedLines(files: readonly Uncommitted[]): string[] {
  const names = (which: 'staged' | 'unstaged') =>
    files
      .filter((f) => f[which])
      .map((f) => terminalName(f.path))
      .join(', ');
  const lines: string[] = [];
  const staged = names('staged');
  const unstaged = names('unstaged');
  if (staged)
    lines.push(
      `your staged edits in ${staged} were left out of the commit: they stay staged, over the run's change (git diff --cached shows them)`,
    );
  if (unstaged)
    lines.push(
      `your uncommitted edits in ${unstaged} were left out of the commit: they stay in your working tree (git diff shows them)`,
    );
  return lines;
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
