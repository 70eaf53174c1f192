import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { findGroup } from '../group/resolve.js';
import { openLedger, readRun, resolveRun } from '../ledger/index.js';
import { showDiff } from '../review/diff.js';
import { type GroupDiffOptions, showGroupDiff } from '../review/group-diff.js';
import { showRevisionDiff } from '../review/revision-diff.js';

/**
 * `agentbox diff <run> [--stat | --name-only] [--color=<when>] [--no-pager]`; `agentbox diff
 * <group> [--attempt k | --attempts j,k]`: the best-ranked attempt's change, one attempt's, or how
 * two attempts' results differ.
 */
export async function diff(
  ctx: CommandContext,
  ref: string,
  options: GroupDiffOptions & { readonly revision?: string },
): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const group = findGroup(ledger, ref);
  if (group) {
    if (options.revision !== undefined) {
      throw new AgentboxError('USAGE', `--revision takes a run; "${ref}" is a group`, {
        hint: `an attempt's change: agentbox diff ${ref} --attempt <k>`,
      });
    }
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
  const run = readRun(ledger, resolveRun(ledger, ref));
  if (options.revision !== undefined) await showRevisionDiff(ctx, repo.root, run, options.revision, options);
  else await showDiff(ctx, repo.root, run, options);
  return 0;
}
