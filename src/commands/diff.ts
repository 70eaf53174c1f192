import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { findGroup } from '../group/resolve.js';
import { openLedger, readRun, resolveRun } from '../ledger/index.js';
import { showDiff } from '../review/diff.js';
import { type GroupDiffOptions, showGroupDiff } from '../review/group-diff.js';

/**
 * `agentbox diff <run> [--stat | --name-only] [--color=<when>] [--no-pager]`; `agentbox diff
 * <group> [--attempt k | --attempts j,k]`: the best-ranked attempt's change, one attempt's, or how
 * two attempts' results differ.
 */
export async function diff(ctx: CommandContext, ref: string, options: GroupDiffOptions): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const group = findGroup(ledger, ref);
  if (group) {
    await showGroupDiff(ctx, repo.root, ledger, group, options);
    return 0;
  }
  const flag =
    options.attempt !== undefined ? '--attempt' : options.attempts !== undefined ? '--attempts' : null;
  if (flag) {
    throw new AgentboxError('USAGE', `${flag} takes a group; "${ref}" is not one`, {
      hint: `a run's change: agentbox diff ${ref}`,
    });
  }
  await showDiff(ctx, repo.root, readRun(ledger, resolveRun(ledger, ref)), options);
  return 0;
}
