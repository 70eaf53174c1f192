import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import type { MergePlan, MergeResult } from '../gate/merge.js';
import { findRepo } from '../git/repo.js';
import { groupAttempts } from '../group/attempts.js';
import {
  assertGroupEnded,
  assertUndecided,
  attemptGroup,
  mergedAttempt,
  rankedAttempts,
  type SettleResult,
  settleGroup,
} from '../group/merge.js';
import {
  type Candidate,
  chooseAttempt,
  namedAttempt,
  nonePassed,
  standing,
  tieError,
} from '../group/merge-select.js';
import { pointedGroup } from '../group/pointed.js';
import { findGroup } from '../group/resolve.js';
import { type GroupDetails, readGroup } from '../group/store.js';
import { type Ledger, openLedger, type RunDetails, readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { terminalJson } from '../util/json-out.js';
import { styler } from '../util/style.js';
import { terminalLine } from '../util/terminal-text.js';

/*
 * `agentbox merge <group>` and `agentbox merge <attempt-run>`: the attempt is chosen here (the best
 * passing one, the person's pick on a tie, or --attempt k), then merged exactly as one run is
 * (merge.ts hands its own steps in: one gate), and only once that merge is done are the others
 * discarded and the group settled (src/group/merge.ts).
 */

/** `agentbox merge`'s options (merge.ts). */
export interface MergeOptions {
  readonly yes?: boolean;
  readonly commit?: boolean;
  readonly json?: boolean;
  /** With --yes: apply a patch with sensitive changes too (the prompt shows them instead). */
  readonly allowSensitive?: boolean;
  /** With --yes: merge a run that did not pass (see src/gate/merge-gate.ts). */
  readonly force?: boolean;
  /** The person applied the change by hand: only record MERGED. */
  readonly markMerged?: boolean;
  /** A group's attempt k (`merge <group> --attempt k`), as typed. */
  readonly attempt?: string;
}

/** merge.ts's steps for one run, handed in (merge.ts imports this file). */
export interface RunGate {
  mergeRun(
    ctx: CommandContext,
    root: string,
    run: RunDetails,
    options: MergeOptions,
    /** What follows `agentbox merge` in a hint: the group and its attempt, not the attempt's run. */
    as?: string,
  ): Promise<{ plan: MergePlan; done: MergeResult } | null>;
  printMerged(
    ctx: CommandContext,
    plan: MergePlan,
    done: MergeResult,
    json: boolean,
    extra: Record<string, unknown>,
  ): void;
  recordByHand(root: string, run: RunDetails, options: MergeOptions): Promise<void>;
  printByHand(ctx: CommandContext, run: RunDetails, json: boolean, extra: Record<string, unknown>): void;
}

export type MergeTarget =
  | { readonly root: string; readonly ledger: Ledger; readonly run: RunDetails; readonly group?: undefined }
  | {
      readonly root: string;
      readonly ledger: Ledger;
      readonly group: GroupDetails;
      /** --attempt k, or the attempt an attempt's own run id named; null: the best. */
      readonly attempt: number | null;
    };

function attemptNumber(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^[1-9]\d{0,3}$/.test(raw.trim())) {
    throw new AgentboxError('USAGE', `--attempt ${JSON.stringify(raw)} is not an attempt number`, {
      hint: 'attempts are numbered from 1: agentbox merge <group> --attempt 2',
    });
  }
  return Number(raw);
}

/**
 * What `merge <ref>` names: a group (its name, id or prefix), an attempt of a group (its own run
 * id: the group with that attempt), or a plain run. An attempt counts as one only when its group
 * lists it: a run's own claim (meta.yaml, a fetched run's) is not enough.
 */
export async function mergeTarget(
  ctx: CommandContext,
  ref: string,
  rawAttempt?: string,
): Promise<MergeTarget> {
  const attempt = attemptNumber(rawAttempt);
  const { root } = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(root);
  // `latest` landing on an attempt means its group (src/group/pointed.ts), unless --attempt says one.
  const groupName = findGroup(ledger, ref) ?? (attempt === null ? pointedGroup(ledger, ref) : null);
  if (groupName) return { root, ledger, group: readGroup(ledger, groupName), attempt };
  const run = readRun(ledger, resolveRun(ledger, ref));
  const of = attemptGroup(ledger, run);
  if (of) {
    if (attempt !== null && attempt !== of.attempt) {
      throw new AgentboxError(
        'USAGE',
        `run ${run.name} is attempt ${of.attempt} of group ${runIdOf(of.group.name)}, not attempt ${attempt}`,
        { hint: `agentbox merge ${runIdOf(of.group.name)} --attempt ${attempt}` },
      );
    }
    return { root, ledger, group: of.group, attempt: of.attempt };
  }
  if (attempt !== null) {
    throw new AgentboxError('USAGE', `--attempt is for a group: ${run.name} is a run of its own`, {
      hint: `agentbox merge ${run.meta.run_id}`,
    });
  }
  return { root, ledger, run };
}

/** The attempt to merge: named, the best passing one, or the person's pick of a tie. */
async function choose(
  ctx: CommandContext,
  t: Extract<MergeTarget, { group: GroupDetails }>,
  options: MergeOptions,
): Promise<Candidate | null> {
  const id = runIdOf(t.group.name);
  const ranked = rankedAttempts(t.ledger, t.group);
  if (t.attempt !== null) return namedAttempt(id, ranked.order, t.attempt);
  const choice = chooseAttempt(ranked);
  if (choice.kind === 'pick') return choice.attempt;
  if (choice.kind === 'none') throw nonePassed(id, ranked.order);
  if (!ctx.io.ask || options.yes) throw tieError(id, choice.attempts);
  const list = choice.attempts
    .map((c) => `  attempt ${c.attempt}: ${c.run} — ${terminalLine(c.reason)}`)
    .join('\n');
  ctx.io.out(`These attempts of group ${id} tie for the best (agentbox show ${id} ranks them):\n${list}\n`);
  const numbers = choice.attempts.map((c) => c.attempt);
  const answer = (
    await ctx.io.ask(`Which attempt do you merge? [${numbers.join('/')}, empty = none] `)
  ).trim();
  return choice.attempts.find((c) => String(c.attempt) === answer) ?? null;
}

/** `merge <group>`: choose, merge that attempt as one run, then settle the group. */
export async function mergeGroup(
  ctx: CommandContext,
  t: Extract<MergeTarget, { group: GroupDetails }>,
  options: MergeOptions,
  gate: RunGate,
): Promise<number> {
  const { root, ledger, group } = t;
  assertUndecided(root, group);
  const attempts = groupAttempts(ledger, group);
  assertGroupEnded(group, attempts, 'merge');
  const interrupted = mergedAttempt(attempts);
  if (interrupted?.name) {
    // A merge went through but the group was not settled after it (interrupted): finish that.
    const settled = await settleGroup(root, ledger, group, {
      attempt: interrupted.attempt,
      run: interrupted.name,
    });
    printSettled(ctx, root, group, settled, options.json === true, interrupted.attempt);
    return 0;
  }
  const chosen = await choose(ctx, t, options);
  const run = chosen && attempts.find((a) => a.attempt === chosen.attempt)?.run;
  if (!chosen || !run) {
    ctx.io.out('Nothing changed.\n');
    return 1;
  }
  const N = group.meta.attempts;
  if (!options.json)
    ctx.io.out(`group ${runIdOf(group.name)}: attempt ${chosen.attempt} of ${N} (${standing(chosen)})\n`);
  const merged = { attempt: chosen.attempt, run: run.name };
  if (options.markMerged) {
    await gate.recordByHand(root, run, options);
    const settled = await settleGroup(root, ledger, group, merged);
    gate.printByHand(ctx, run, options.json === true, groupJson(group, settled, chosen.attempt));
    if (!options.json) printSettled(ctx, root, group, settled, false, chosen.attempt);
    return 0;
  }
  const done = await gate.mergeRun(
    ctx,
    root,
    run,
    options,
    `${runIdOf(group.name)} --attempt ${chosen.attempt}`,
  );
  if (!done) return 1;
  const settled = await settleGroup(root, ledger, group, merged);
  gate.printMerged(
    ctx,
    done.plan,
    done.done,
    options.json === true,
    groupJson(group, settled, chosen.attempt),
  );
  if (!options.json) printSettled(ctx, root, group, settled, false, chosen.attempt);
  return 0;
}

function groupJson(group: GroupDetails, settled: SettleResult, attempt: number): Record<string, unknown> {
  return {
    group: group.name,
    attempt,
    group_status: settled.status,
    discarded: settled.discarded.map((d) => d.run),
    not_discarded: settled.failed,
    patches: settled.patches,
  };
}

/** What settling did to the rest of the group, and what did not go. */
export function printSettled(
  ctx: CommandContext,
  root: string,
  group: GroupDetails,
  settled: SettleResult,
  json: boolean,
  attempt: number | null,
): void {
  if (json) {
    ctx.io.out(`${terminalJson({ status: settled.status, ...groupJson(group, settled, attempt ?? 0) })}\n`);
    return;
  }
  const s = styler(ctx.io);
  const others = settled.discarded.map((d) => d.attempt);
  const what = settled.status === 'MERGED' ? `merged (attempt ${attempt})` : 'discarded';
  ctx.io.out(
    `${s.ok('✓')} group ${runIdOf(group.name)} ${what}${others.length ? `; discarded attempt(s) ${others.join(', ')}: worktrees and branches removed` : ''}\n`,
  );
  ctx.io.out(`  every attempt's patch is kept in ${path.relative(root, settled.patches)}/\n`);
  for (const f of settled.failed)
    ctx.io.out(
      `  ${s.bad('✗')} attempt ${f.attempt} was not discarded: ${terminalLine(f.message)} — agentbox discard ${f.run}\n`,
    );
}
