import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { controlSession, restartingLine } from '../interactive/control.js';
import { openRun } from '../run/open.js';
import { styler } from '../util/style.js';

/** `agentbox restart <run> [--fresh]`: restarts claude in a running session. */
export async function restart(
  ctx: CommandContext,
  ref: string,
  options: { fresh?: boolean },
): Promise<number> {
  assertHuman(ctx.env, 'restart', ctx.cwd);
  const { run } = await openRun(ctx.cwd, ref, ctx.env);
  await controlSession(run, 'restart', { mode: options.fresh ? 'fresh' : 'resume' });
  ctx.io.out(restartingLine(run, options.fresh === true, styler(ctx.io).ok('✓')));
  return 0;
}
