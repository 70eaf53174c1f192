import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { openLedger, resolveRun } from '../ledger/index.js';
import { checkRemoteName, DEFAULT_REMOTE } from '../remote/refs.js';
import { type Shared, shareRun } from '../remote/share.js';

export interface PushOptions {
  readonly raw?: boolean;
  readonly json?: boolean;
}

/** `agentbox push <run> [<remote>]`: publishes the run's ledger entry (and branch) to the remote. */
export async function push(
  ctx: CommandContext,
  ref: string,
  remote: string | undefined,
  options: PushOptions,
): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const name = resolveRun(ledger, ref);
  const shared = await shareRun(ledger, name, checkRemoteName(remote ?? DEFAULT_REMOTE), {
    env: ctx.env,
    raw: options.raw === true,
  });
  printShared(ctx, shared, options.json === true);
  return 0;
}

/** One line per published run; `--json` prints the publication as it is. */
export function printShared(ctx: CommandContext, shared: Shared, json: boolean): void {
  if (json) {
    ctx.io.out(`${JSON.stringify(shared)}\n`);
    return;
  }
  const what = shared.branch ? `its ledger entry and branch agentbox/${shared.run}` : 'its ledger entry';
  const how = shared.changed ? `commit ${shared.commit.slice(0, 12)}` : 'unchanged since its last push';
  ctx.io.out(
    `published ${shared.run} to ${shared.remote}: ${what} (${how})\n  elsewhere: agentbox fetch ${shared.remote}, then agentbox show ${shared.run.slice(-6)}\n`,
  );
}
