import path from 'node:path';
import { parseDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { assertHuman } from '../gate/gate.js';
import { collectGarbage, type GcItem } from '../gate/gc.js';
import { findRepo } from '../git/repo.js';
import { terminalJson } from '../util/json-out.js';

export interface GcOptions {
  readonly olderThan?: string;
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

/**
 * `agentbox gc [--older-than <duration>] [--dry-run]`: removes the worktrees and branches of MERGED
 * and DISCARDED runs and of DONE fix runs, and with --older-than old run folders too (src/gate/gc.ts decides what);
 * --dry-run lists.
 */
export async function gc(ctx: CommandContext, options: GcOptions): Promise<number> {
  assertHuman(ctx.env, 'gc', ctx.cwd);
  let cutoff: number | null = null;
  if (options.olderThan !== undefined) {
    const ms = parseDuration(options.olderThan);
    if (ms === undefined) {
      throw new AgentboxError(
        'USAGE',
        `--older-than ${JSON.stringify(options.olderThan)} is not a duration`,
        {
          hint: 'give a number and a unit, e.g. 30d, 12h or 90m',
        },
      );
    }
    cutoff = Date.now() - ms;
  }
  const repo = await findRepo(ctx.cwd, ctx.env);
  const dry = options.dryRun === true;
  const { removed, keptReview } = await collectGarbage(repo.root, cutoff, dry);
  report(ctx, repo.root, { removed, keptReview, dry, json: options.json === true });
  return 0;
}

function report(
  ctx: CommandContext,
  root: string,
  r: { removed: GcItem[]; keptReview: string[]; dry: boolean; json: boolean },
): void {
  if (r.json) {
    ctx.io.out(`${terminalJson({ dry_run: r.dry, removed: r.removed, kept_review: r.keptReview }, 2)}\n`);
    return;
  }
  const verb = r.dry ? 'would remove' : 'removed';
  const show = (p: string) => (p.startsWith(`${root}/`) ? path.relative(root, p) : p);
  for (const item of r.removed) {
    const label = item.what.replace('_', ' ');
    const folder = item.what === 'run_folder' || item.what === 'group_folder';
    ctx.io.out(`${verb} ${label} ${show(item.path)}${folder ? '' : ` (${item.run})`}\n`);
  }
  if (r.keptReview.length > 0) {
    ctx.io.out(
      `kept ${r.keptReview.length} old run(s) in REVIEW: their changes wait for agentbox merge or discard\n`,
    );
  }
  const count = (what: GcItem['what']) => r.removed.filter((i) => i.what === what).length;
  ctx.io.out(
    r.removed.length === 0
      ? 'nothing to collect\n'
      : `${r.dry ? 'dry run: nothing removed; would remove' : 'gc removed'} ${count('worktree')} worktree(s), ${count('branch')} branch(es), ${count('checkpoint')} checkpoint(s), ${count('run_folder')} run folder(s)${count('group_folder') ? `, ${count('group_folder')} group folder(s)` : ''}\n`,
  );
}
