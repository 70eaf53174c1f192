import type { CommandContext } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { checkMessage, deliveredJson, deliverMessage } from '../gate/inject.js';
import { openRun } from '../run/open.js';
import { terminalJson } from '../util/json-out.js';
import { styler } from '../util/style.js';

/** `agentbox inject <run> "<text>"`: queues a message for a live run (see src/gate/inject.ts). */
export async function inject(
  ctx: CommandContext,
  ref: string,
  text: string,
  options: { json?: boolean },
): Promise<number> {
  // An agent may not steer another run (or a person's session) through its supervisor.
  assertHuman(ctx.env, 'inject', ctx.cwd);
  checkMessage(text);
  const { run } = await openRun(ctx.cwd, ref, ctx.env);
  const done = await deliverMessage(run, text);
  const ok = styler(ctx.io).ok('✓');
  if (options.json) ctx.io.out(`${terminalJson(deliveredJson(run.name, done))}\n`);
  else if (done.to === 'session')
    ctx.io.out(`${ok} sent to ${run.name}: typed in when claude is idle (${done.reply.queued} waiting)\n`);
  else ctx.io.out(`${ok} queued for ${run.name}: delivered at its next stop (${done.pending} waiting)\n`);
  return 0;
}
