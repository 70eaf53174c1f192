import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { assertHuman } from '../run/gate.js';
import { discardRun } from '../run/merge.js';
import { openRun } from '../run/open.js';

/** `agentbox discard <run>`: removes the worktree and its branch, keeps the run folder and patch. */
export async function discard(
  ctx: CommandContext,
  ref: string,
  options: { json?: boolean },
): Promise<number> {
  assertHuman(ctx.env, 'discard', ctx.cwd);
  const { root, run } = await openRun(ctx.cwd, ref);
  const done = await discardRun(root, run);
  if (options.json) {
    ctx.io.out(
      `${JSON.stringify({ run: run.name, status: done.status, removedWorktree: done.removedWorktree, deletedBranch: done.deletedBranch })}\n`,
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
  return 0;
}
