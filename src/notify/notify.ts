import type { Io } from '../context.js';
import type { Env } from '../util/env.js';
import { runNotifyCommand } from './command.js';
import { alertText, type NotifyPayload, terminalAlert } from './payload.js';

export interface NotifySettings {
  /** `runs.notify`: a shell command, or null. */
  readonly command: string | null;
  readonly timeoutMs: number;
  /** `runs.notify_bell`: ring the terminal. */
  readonly bell: boolean;
}

/**
 * Tells the person: rings the terminal that started the run (only a terminal: never into a pipe
 * or a detached worker's log) and runs `runs.notify` with the payload. A failed or hung command is
 * recorded in the run's events and said on stderr; it never changes the run's outcome.
 */
export async function notifyPerson(input: {
  readonly io: Io;
  readonly env: Env;
  readonly cwd: string;
  /** Appends to the run's events.jsonl. */
  readonly record: (event: Record<string, unknown>) => void;
  readonly settings: NotifySettings;
  readonly payload: NotifyPayload;
}): Promise<void> {
  const { io, settings, payload } = input;
  if (settings.bell && io.isTTY) io.out(terminalAlert(alertText(payload), input.env));
  if (!settings.command) return;
  const result = await runNotifyCommand(settings.command, payload, {
    cwd: input.cwd,
    env: input.env,
    timeoutMs: settings.timeoutMs,
  });
  if (result.ok) {
    input.record({ event: 'notified', for: payload.event });
    return;
  }
  const why = result.timedOut
    ? `stopped after ${Math.round(settings.timeoutMs / 1000)} s`
    : `exit code ${result.exitCode ?? '?'}`;
  input.record({
    event: 'notify_failed',
    for: payload.event,
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    stderr: result.stderr.slice(-500),
  });
  io.err(
    `agentbox: runs.notify failed (${why})${result.stderr ? `: ${result.stderr.split('\n').at(-1)}` : ''}\n`,
  );
}
