import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { findGroup } from '../group/resolve.js';
import { openLedger, resolveRun } from '../ledger/index.js';
import { checkRemoteName, DEFAULT_REMOTE } from '../remote/refs.js';
import { type Shared, shareRun } from '../remote/share.js';
import { type SharedGroup, shareGroup } from '../remote/share-group.js';
import { terminalJson } from '../util/json-out.js';

export interface PushOptions {
  readonly raw?: boolean;
  readonly json?: boolean;
}

/** `agentbox push <run|group> [<remote>]`: publishes the run's ledger entry (and branch), or a group whole. */
export async function push(
  ctx: CommandContext,
  ref: string,
  remote: string | undefined,
  options: PushOptions,
): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const to = checkRemoteName(remote ?? DEFAULT_REMOTE);
  const opts = { env: ctx.env, raw: options.raw === true };
  // A group is published whole: its folder and every attempt, in one push.
  const group = findGroup(ledger, ref);
  if (group !== null) {
    printSharedGroup(ctx, await shareGroup(ledger, group, to, opts), options.json === true);
    return 0;
  }
  const shared = await shareRun(ledger, resolveRun(ledger, ref), to, opts);
  printShared(ctx, shared, options.json === true);
  return 0;
}

/** What `agentbox push <group>` prints; `--json` the publication as it is. */
export function printSharedGroup(ctx: CommandContext, shared: SharedGroup, json: boolean): void {
  if (json) {
    ctx.io.out(`${terminalJson(shared)}\n`);
    return;
  }
  const how = shared.changed ? `commit ${shared.commit.slice(0, 12)}` : 'unchanged since its last push';
  const lines = [
    `published group ${shared.group} to ${shared.remote}: its folder and ${shared.attempts.length} attempt(s), in one push (${how})`,
    ...shared.attempts.map(
      (a) =>
        `  attempt ${a.attempt}  ${a.run}${shared.branches.includes(a.run) ? ` with its branch agentbox/${a.run}` : ''}`,
    ),
    `  elsewhere: agentbox fetch ${shared.remote}, then agentbox show ${shared.group.slice(-6)}`,
  ];
  ctx.io.out(`${lines.join('\n')}\n`);
}

/** One line per published run; `--json` prints the publication as it is. */
export function printShared(ctx: CommandContext, shared: Shared, json: boolean): void {
  if (json) {
    ctx.io.out(`${terminalJson(shared)}\n`);
    return;
  }
  const what = shared.branch ? `its ledger entry and branch agentbox/${shared.run}` : 'its ledger entry';
  const how = shared.changed ? `commit ${shared.commit.slice(0, 12)}` : 'unchanged since its last push';
  ctx.io.out(
    `published ${shared.run} to ${shared.remote}: ${what} (${how})\n  elsewhere: agentbox fetch ${shared.remote}, then agentbox show ${shared.run.slice(-6)}\n`,
  );
}
