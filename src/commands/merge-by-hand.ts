import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { mergeablePatch, recordMergedByHand } from '../gate/merge.js';
import type { RunDetails } from '../ledger/index.js';
import { terminalJson } from '../util/json-out.js';
import { styler } from '../util/style.js';
import type { MergeOptions } from './merge-group.js';

/*
 * `agentbox merge <run> --mark-merged`: the person applied the change themselves (after a
 * conflict); the run is recorded MERGED and nothing is applied.
 */

/**
 * `merge --mark-merged`: the person merged the change by hand (after a conflict, or part of it):
 * the run is recorded MERGED and nothing in the working tree is touched.
 */
export async function markMerged(
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
  if (json) ctx.io.out(`${terminalJson({ run: run.name, status: 'MERGED', byHand: true, ...extra })}\n`);
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
