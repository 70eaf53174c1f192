import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { discardRun } from '../gate/discard.js';
import { assertHuman } from '../gate/gate.js';
import { findRepo } from '../git/repo.js';
import { groupAttempts } from '../group/attempts.js';
import { assertGroupEnded, mergedAttempt, settleGroup } from '../group/merge.js';
import { pointedGroup } from '../group/pointed.js';
import { findGroup } from '../group/resolve.js';
import { type GroupDetails, readGroup } from '../group/store.js';
import { openLedger, readRun, resolveRun, runIdOf } from '../ledger/index.js';
import { terminalJson } from '../util/json-out.js';
import { terminalLine } from '../util/terminal-text.js';
import { printSettled } from './merge-group.js';

/** `agentbox discard <run>`: removes the worktree and its branch, keeps the run folder and patch. */
export async function discard(
  ctx: CommandContext,
  ref: string,
  options: { json?: boolean; remote?: boolean | string },
): Promise<number> {
  assertHuman(ctx.env, 'discard', ctx.cwd);
  const { root, ledger } = await openLedgerAt(ctx);
  const groupName = findGroup(ledger, ref) ?? pointedGroup(ledger, ref);
  if (groupName) return discardGroup(ctx, root, readGroup(ledger, groupName), options);
  const run = readRun(ledger, resolveRun(ledger, ref));
  const done = await discardRun(root, run);
  const unpublished = options.remote
    ? await (await import('../remote/share.js')).unpublishRun(
        openLedger(root),
        run.meta,
        options.remote,
        ctx.env,
      )
    : null;
  if (options.json) {
    ctx.io.out(
      `${terminalJson({ run: run.name, status: done.status, removedWorktree: done.removedWorktree, deletedBranch: done.deletedBranch, ...(done.left.length ? { left: done.left } : {}), ...(unpublished ? { remote: unpublished } : {}) })}\n`,
    );
    return 0;
  }
  const what = [done.removedWorktree && 'worktree', done.deletedBranch && `branch ${done.branch}`].filter(
    Boolean,
  );
  ctx.io.out(
    `${done.status === 'MERGED' ? 'cleaned up merged run' : done.already ? 'already discarded' : 'discarded'} ${run.name}${what.length ? ` — removed ${what.join(' and ')}` : ''}\n` +
      `  kept ${path.relative(root, run.dir)}/ (report${fs.existsSync(path.join(run.dir, 'changes.patch')) ? ' and changes.patch' : ''})\n`,
  );
  for (const left of done.left)
    ctx.io.out(
      `  left ${terminalLine(left)}: its state names it, but it is not this run's own (agentbox/${run.name})\n`,
    );
  if (unpublished)
    ctx.io.out(
      `  ${unpublished.remote}: ${unpublished.deleted.length ? `deleted ${unpublished.deleted.join(' and ')}` : 'held none of its refs'}\n`,
    );
  return 0;
}

async function openLedgerAt(ctx: CommandContext) {
  const { root } = await findRepo(ctx.cwd, ctx.env);
  return { root, ledger: openLedger(root) };
}

/**
 * `agentbox discard <group>`: every attempt discarded (worktrees and branches removed), their
 * patches kept in the group's folder, the group DISCARDED. Twice is harmless. A group one of whose
 * attempts was merged stays MERGED: its change is in your tree.
 */
async function discardGroup(
  ctx: CommandContext,
  root: string,
  group: GroupDetails,
  options: { json?: boolean; remote?: boolean | string },
): Promise<number> {
  const id = runIdOf(group.name);
  const ledger = openLedger(root);
  const attempts = groupAttempts(ledger, group);
  assertGroupEnded(group, attempts, 'discard');
  const already = group.state.status === 'DISCARDED';
  const merged = mergedAttempt(attempts);
  const settled = await settleGroup(
    root,
    ledger,
    group,
    group.state.merged ?? (merged?.name ? { attempt: merged.attempt, run: merged.name } : null),
  );
  const wasMerged = group.state.status === 'MERGED' ? group.state.merged : null;
  if (!options.json && (already || wasMerged)) {
    // Decided before: said as it is, not as if this command had just done it (it repeated the
    // merge's "✓ merged" line, or said "already discarded" and then "✓ discarded"; found by a user's eye).
    ctx.io.out(
      already
        ? `group ${id} was already discarded: nothing more to do (every attempt's patch is in ${path.relative(root, settled.patches)}/)\n`
        : `group ${id} was merged (attempt ${wasMerged!.attempt}): its other attempts are discarded; the merged attempt's worktree and branch go with: agentbox discard ${runIdOf(wasMerged!.run)}\n`,
    );
    for (const f of settled.failed)
      ctx.io.out(
        `  ✗ attempt ${f.attempt} was not discarded: ${terminalLine(f.message)} — agentbox discard ${f.run}\n`,
      );
  } else
    printSettled(
      ctx,
      root,
      group,
      settled,
      options.json === true,
      group.state.merged?.attempt ?? merged?.attempt ?? null,
    );
  // --remote: the group's publication goes whole (its attempts are its commit's parents).
  if (options.remote) {
    const { unpublishGroup } = await import('../remote/share-group.js');
    const gone = await unpublishGroup(ledger, group, options.remote, ctx.env);
    const line = `  ${gone.remote}: ${gone.deleted.length ? `deleted ${gone.deleted.length} ref(s): the group, its attempts and their branches` : 'held none of its refs'}\n`;
    if (options.json) ctx.io.err(line);
    else ctx.io.out(line);
  }
  return 0;
}
