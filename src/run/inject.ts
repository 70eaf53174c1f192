import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { ipcRequest } from '../interactive/ipc.js';
import { openLedger, readRun, resolveRun } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { enqueue, pendingCount } from '../supervisor/inbox.js';
import { styler } from '../util/style.js';
import { assertHuman } from './gate.js';

/**
 * `agentbox inject <run> "<text>"`: queues a message for a live run. Its supervisor delivers it at
 * the agent's next Stop, as the instruction the agent goes on with: exactly once, in the order
 * queued (several waiting messages go together, oldest first), recorded in events.jsonl.
 */
export async function inject(
  ctx: CommandContext,
  ref: string,
  text: string,
  options: { json?: boolean },
): Promise<number> {
  // An agent may not steer another run (or a person's session) through its supervisor.
  assertHuman(ctx.env, 'inject', ctx.cwd);
  if (text.trim() === '') {
    throw new AgentboxError('USAGE', 'the message is empty', {
      hint: 'agentbox inject latest "also update the docs"',
    });
  }
  const repo = await findRepo(ctx.cwd);
  const ledger = openLedger(repo.root);
  const run = readRun(ledger, resolveRun(ledger, ref));
  const state = run.state;
  if (state?.status !== 'ACTIVE' || !isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError(
      'USAGE',
      `run ${run.name} is not running (${state?.status ?? 'no state'}): nothing would read the message`,
      {
        hint: `continue it with the message instead: agentbox resume ${run.meta.run_id} "${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`,
      },
    );
  }
  if (run.meta.type === 'interactive' && state.socket_path) {
    // A session takes it through its control socket and types it in when claude is idle.
    const result = (await ipcRequest(state.socket_path, 'inject', { text })) as { queued: number };
    if (options.json) ctx.io.out(`${JSON.stringify({ run: run.name, ...result })}\n`);
    else
      ctx.io.out(
        `${styler(ctx.io).ok('✓')} sent to ${run.name}: typed in when claude is idle (${result.queued} waiting)\n`,
      );
    return 0;
  }
  const id = enqueue(run.dir, text);
  const waiting = pendingCount(run.dir);
  if (options.json) ctx.io.out(`${JSON.stringify({ run: run.name, id, pending: waiting })}\n`);
  else {
    const s = styler(ctx.io);
    ctx.io.out(`${s.ok('✓')} queued for ${run.name}: delivered at its next stop (${waiting} waiting)\n`);
  }
  return 0;
}
