import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { discardRun } from '../gate/merge.js';
import { openLedger } from '../ledger/index.js';
import { openRun } from '../run/open.js';

/** `agentbox discard <run>`: removes the worktree and its branch, keeps the run folder and patch. */
export async function discard(
  ctx: CommandContext,
  ref: string,
  options: { json?: boolean; remote?: boolean | string },
): Promise<number> {
  assertHuman(ctx.env, 'discard', ctx.cwd);
  const { root, run } = await openRun(ctx.cwd, ref, ctx.env);
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
      `${JSON.stringify({ run: run.name, status: done.status, removedWorktree: done.removedWorktree, deletedBranch: done.deletedBranch, ...(unpublished ? { remote: unpublished } : {}) })}\n`,
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
  if (unpublished)
    ctx.io.out(
      `  ${unpublished.remote}: ${unpublished.deleted.length ? `deleted ${unpublished.deleted.join(' and ')}` : 'held none of its refs'}\n`,
    );
  return 0;
}
