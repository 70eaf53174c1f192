import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import {
  awaitStop,
  requestStop,
  type StopOptions,
  stopExitCode,
  stoppedLine,
  stoppingLine,
} from '../gate/stop.js';
import { groupOf } from '../group/open.js';
import { stopGroup } from '../group/stop.js';
import { controlSession } from '../interactive/control.js';
import { runIdOf } from '../ledger/names.js';
import { openRun } from '../run/open.js';
import { styler } from '../util/style.js';

/**
 * `agentbox stop <run> [--force]`: a session is asked through its control socket (`--force`: claude
 * is killed at once); a headless run's process by a signal, then awaited (`--force`: killed if it
 * has not ended after 10 s).
 */
export async function stop(ctx: CommandContext, ref: string, options: StopOptions): Promise<number> {
  assertHuman(ctx.env, 'stop', ctx.cwd);
  const group = await groupOf(ctx, ref);
  if (group) {
    ctx.io.out(`stopping group ${group.name} …\n`);
    const how = await stopGroup(group.ledger, group.name, options);
    ctx.io.out(
      how === 'ended'
        ? `${styler(ctx.io).ok('✓')} group ${group.name} stopped\n  next: agentbox show ${runIdOf(group.name)}\n`
        : `${styler(ctx.io).warn('!')} group ${group.name}: its process is gone; agentbox recover accounts for its attempts\n`,
    );
    return how === 'gone' ? 1 : 0;
  }
  const { run } = await openRun(ctx.cwd, ref, ctx.env);
  const s = styler(ctx.io);
  if (run.meta.type === 'interactive') {
    await controlSession(run, 'stop', { graceful: !options.force });
    ctx.io.out(`${s.ok('✓')} stopping ${run.name}\n`);
    return 0;
  }
  const pid = await requestStop(run);
  ctx.io.out(stoppingLine(run, pid));
  const outcome = await awaitStop(run, pid, options);
  ctx.io.out(stoppedLine(run, outcome, s));
  return stopExitCode(outcome);
}
