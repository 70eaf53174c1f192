import { AgentboxError } from '../errors.js';
import { requestAttemptStop } from '../group/stop-request.js';
import { EventLog } from '../ledger/events.js';
import { type Failure, type RunDetails, type RunStatus, readState } from '../ledger/index.js';
import { isAlive, isRecordedProcess } from '../process/reap.js';
import { catchesSignal } from '../process/signals.js';
import type { Styler } from '../util/style.js';
import { terminalText } from '../util/terminal-text.js';
import { STOP_SIGNAL } from './signals.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/*
 * `agentbox stop <run>` for a headless run (foreground or detached): the same clean end as Ctrl-C
 * in its terminal — claude is ended, the patch and report are written, the run is ABORTED with the
 * reason — asked of the run's own agentbox process by a signal (STOP_SIGNAL), then awaited.
 */

/** How the stopped run ended: it recorded its end, or its process went without doing so. */
export type StopOutcome =
  | { readonly kind: 'ended'; readonly status: RunStatus; readonly failure: Failure | null }
  | { readonly kind: 'gone'; readonly killed: boolean };

export interface StopOptions {
  /** If the run has not ended after `graceMs`, SIGKILL (the watchdog then marks it CRASHED). */
  readonly force?: boolean;
  readonly graceMs?: number;
  readonly waitMs?: number;
}

/** Asks a running headless run's process to stop; returns its pid. */
export async function requestStop(run: RunDetails): Promise<number> {
  const state = run.state;
  const running = state && (state.status === 'ACTIVE' || state.status === 'STALLED');
  const origin = run.meta.origin;
  if (origin && running)
    throw new AgentboxError(
      'USAGE',
      `run ${run.name} runs on ${origin.host}, not here: it cannot be stopped from here`,
      {
        hint: `stop it there; agentbox fetch ${origin.remote} brings how it ended`,
      },
    );
  if (!state || !running || !isRecordedProcess(state.pid, state.pid_start)) {
    throw new AgentboxError('USAGE', `run ${run.name} is not running (${state?.status ?? 'no state'})`, {
      hint: `see it with agentbox show ${run.meta.run_id}`,
    });
  }
  const pid = state.pid!;
  new EventLog(run.dir).append({ event: 'stop_requested', by: 'agentbox stop', pid });
  // An attempt of a group shares its process with the other attempts: a signal would stop them
  // all, so it is asked through its run folder (src/group/stop-request.ts).
  if (state.summary?.group) {
    requestAttemptStop(run.dir, 'agentbox stop');
    return pid;
  }
  // A detached worker that is still starting has no handler yet, and the signal would kill it
  // half-made: wait (a few seconds at most) until it catches the signal.
  const ready = Date.now() + 10_000;
  while (catchesSignal(pid, STOP_SIGNAL) === false && Date.now() < ready) await sleep(50);
  process.kill(pid, STOP_SIGNAL);
  return pid;
}

/** Waits for a run asked to stop to end; with `force`, kills it after the grace period. */
export async function awaitStop(run: RunDetails, pid: number, options: StopOptions): Promise<StopOutcome> {
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  const killAt = Date.now() + (options.graceMs ?? 10_000);
  let killed = false;
  for (;;) {
    const now = readState(run.dir);
    if (now && now.status !== 'ACTIVE' && now.status !== 'STALLED')
      return { kind: 'ended', status: now.status, failure: now.failure };
    if (!isAlive(pid, run.state?.pid_start)) return { kind: 'gone', killed };
    if (options.force && !killed && Date.now() > killAt) {
      // Its claude, always: an attempt's process runs the other attempts too, and a run served by
      // a resident agentbox (docs/resident.md) has its client as its process, not the one that
      // runs claude. The run's own process too, but an attempt's.
      const now = readState(run.dir);
      if (now?.claude_pid && isRecordedProcess(now.claude_pid, now.claude_pid_start))
        process.kill(now.claude_pid, 'SIGKILL');
      if (!run.state?.summary?.group && isRecordedProcess(pid, run.state?.pid_start))
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

/** `stop`'s exit code: 0 once the run ended (or was killed as asked), 1 when it went by itself. */
export const stopExitCode = (o: StopOutcome): number => (o.kind === 'ended' || o.killed ? 0 : 1);

/** What `agentbox stop` says once it has asked, and the web UI answers with first. Pure. */
export const stoppingLine = (run: RunDetails, pid: number): string => `stopping ${run.name} (pid ${pid}) …\n`;

/** What `agentbox stop` says once the run ended, and the web UI answers with after. Pure. */
export function stoppedLine(run: RunDetails, o: StopOutcome, s: Styler): string {
  if (o.kind === 'gone') {
    return `${s.warn('!')} ${run.name}: its process is gone; agentbox status marks it and agentbox resume ${run.meta.run_id} finishes it\n`;
  }
  const why = o.failure ? ` (${o.failure.kind}): ${terminalText(o.failure.message)}` : '';
  return `${s.ok('✓')} ${run.name} — ${o.status}${why}\n  next: agentbox show ${run.meta.run_id}\n`;
}
