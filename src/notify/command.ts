import { spawnOwned } from '../process/owned.js';
import type { Env } from '../util/env.js';
import type { NotifyPayload } from './payload.js';

export interface NotifyResult {
  readonly ok: boolean;
  /** null: stopped at the timeout, or it could not start. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** The end of its stderr, for the run's events. */
  readonly stderr: string;
}

const SHELL = '/bin/sh';

/** After the timeout, SIGTERM; this long later, SIGKILL. */
const GRACE_MS = 1000;

/**
 * Runs the person's `runs.notify` command through `sh -c`, the payload as JSON on its standard
 * input. It runs as the person, outside any sandbox: it is their own config (agentbox.yaml changes
 * are sensitive in a patch, so a run cannot slip one in). Like every child agentbox starts, it is
 * owned (src/process/owned.ts): stopped with what it started at the timeout, and what it leaves
 * running when it exits (`cmd &`, even `setsid`) is stopped too — otherwise a descendant holding
 * its stderr would keep agentbox waiting. Never throws.
 */
export async function runNotifyCommand(
  command: string,
  payload: NotifyPayload,
  options: { readonly cwd: string; readonly env: Env; readonly timeoutMs: number },
): Promise<NotifyResult> {
  let stderr = '';
  const env: Record<string, string> = { AGENTBOX_NOTIFY_EVENT: payload.event };
  for (const [key, value] of Object.entries(options.env)) if (value !== undefined) env[key] ??= value;
  const child = spawnOwned(SHELL, ['-c', command], {
    cwd: options.cwd,
    env,
    input: `${JSON.stringify(payload)}\n`,
    onStderr: (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void child.stop(GRACE_MS);
  }, options.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  if (exit.spawnError) return { ok: false, exitCode: null, timedOut: false, stderr: exit.spawnError };
  return {
    ok: exit.code === 0 && !timedOut,
    exitCode: timedOut ? null : exit.code,
    timedOut,
    stderr: stderr.trim(),
  };
}
