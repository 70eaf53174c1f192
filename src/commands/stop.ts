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
import { controlSession } from '../interactive/control.js';
import { openRun } from '../run/open.js';
import { styler } from '../util/style.js';

/**
 * `agentbox stop <run> [--force]`: a session is asked through its control socket (`--force`: claude
 * is killed at once); a headless run's process by a signal, then awaited (`--force`: killed if it
 * has not ended after 10 s).
 */
export async function stop(ctx: CommandContext, ref: string, options: StopOptions): Promise<number> {
  assertHuman(ctx.env, 'stop', ctx.cwd);
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
