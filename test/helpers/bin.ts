import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built CLI, as `npx agentbox` runs it. `npm test` builds before the e2e suite. */
export const AGENTBOX_BIN = path.join(REPO_ROOT, 'bin/agentbox.cjs');

export interface BinResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built agentbox bin as a separate process (argument array, no shell). */
export function runAgentbox(
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number; input?: string; bin?: string },
): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? AGENTBOX_BIN, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentbox ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A child that exits (or closes its stdin) before it reads what is written: EPIPE on our end,
    // which is no failure of the test's own (its exit and output say what happened). Unhandled, it
    // was an uncaught exception that failed a whole suite beside another (issue 36).
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
