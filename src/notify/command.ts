import { spawn } from 'node:child_process';
import type { Env } from '../util/env.js';
import type { NotifyPayload } from './payload.js';

export interface NotifyResult {
  readonly ok: boolean;
  /** null: killed at the timeout, or it could not start. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** The end of its stderr, for the run's events. */
  readonly stderr: string;
}

/**
 * Runs the person's `runs.notify` command through `sh -c`, the payload as JSON on its standard
 * input, in its own process group so the whole group is killed at the timeout. It runs as the
 * person, outside any sandbox: it is their own config (agentbox.yaml changes are sensitive in a
 * patch, so a run cannot slip one in). Never throws.
 */
export function runNotifyCommand(
  command: string,
  payload: NotifyPayload,
  options: { readonly cwd: string; readonly env: Env; readonly timeoutMs: number },
): Promise<NotifyResult> {
  return new Promise((resolve) => {
    let stderr = '';
    let timedOut = false;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('sh', ['-c', command], {
        cwd: options.cwd,
        env: { ...(options.env as NodeJS.ProcessEnv), AGENTBOX_NOTIFY_EVENT: payload.event },
        stdio: ['pipe', 'ignore', 'pipe'],
        detached: true,
      });
    } catch (error) {
      resolve({ ok: false, exitCode: null, timedOut: false, stderr: (error as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, options.timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-2000);
    });
    child.stdin!.on('error', () => {}); // a command that does not read its input
    child.stdin!.end(`${JSON.stringify(payload)}\n`);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, exitCode: null, timedOut: false, stderr: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        ok: code === 0 && !timedOut,
        exitCode: timedOut ? null : code,
        timedOut,
        stderr: stderr.trim(),
      });
    });
  });
}
