import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { type RunDetails, readState } from '../ledger/index.js';
import { isAlive } from '../process/reap.js';
import { catchesSignal } from '../process/signals.js';
import { styler } from '../util/style.js';
import { EventLog } from './events.js';
import { STOP_SIGNAL } from './signals.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `agentbox stop <run>` for a headless run (foreground or detached): the same clean end as Ctrl-C
 * in its terminal — claude is ended, the patch and report are written, the run is ABORTED with the
 * reason — asked of the run's own agentbox process by a signal (STOP_SIGNAL), then awaited.
 * `force`: if it has not ended after `graceMs`, SIGKILL (the watchdog then marks it CRASHED and
 * `resume`/`recover` finish it).
 */
export async function stopHeadless(
  ctx: CommandContext,
  run: RunDetails,
  options: { readonly force?: boolean; readonly graceMs?: number; readonly waitMs?: number },
): Promise<number> {
  const state = run.state;
  const running = state && (state.status === 'ACTIVE' || state.status === 'STALLED');
  if (!state || !running || !isAlive(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${run.name} is not running (${state?.status ?? 'no state'})`, {
      hint: `see it with agentbox show ${run.meta.run_id}`,
    });
  }
  const pid = state.pid!;
  new EventLog(run.dir).append({ event: 'stop_requested', by: 'agentbox stop', pid });
  // A detached worker that is still starting has no handler yet, and the signal would kill it
  // half-made: wait (a few seconds at most) until it catches the signal.
  const ready = Date.now() + 10_000;
  while (catchesSignal(pid, STOP_SIGNAL) === false && Date.now() < ready) await sleep(50);
  process.kill(pid, STOP_SIGNAL);
  const s = styler(ctx.io);
  ctx.io.out(`stopping ${run.name} (pid ${pid}) …\n`);
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  const killAt = Date.now() + (options.graceMs ?? 10_000);
  let killed = false;
  for (;;) {
    const now = readState(run.dir);
    if (now && now.status !== 'ACTIVE' && now.status !== 'STALLED') {
      const why = now.failure ? ` (${now.failure.kind}): ${now.failure.message}` : '';
      ctx.io.out(
        `${s.ok('✓')} ${run.name} — ${now.status}${why}\n  next: agentbox show ${run.meta.run_id}\n`,
      );
      return 0;
    }
    if (!isAlive(pid, state.pid_start)) {
      ctx.io.out(
        `${s.warn('!')} ${run.name}: its process is gone; agentbox status marks it and agentbox resume ${run.meta.run_id} finishes it\n`,
      );
      return killed ? 0 : 1;
    }
    if (options.force && !killed && Date.now() > killAt) {
      process.kill(pid, 'SIGKILL');
      killed = true;
    }
    if (Date.now() > deadline) {
      throw new AgentboxError(
        'IO_FAILED',
        `run ${run.name} did not stop within ${Math.round((options.waitMs ?? 60_000) / 1000)} s`,
        {
          hint: `force it: agentbox stop ${run.meta.run_id} --force`,
        },
      );
    }
    await sleep(200);
  }
}
