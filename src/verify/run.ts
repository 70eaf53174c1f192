import path from 'node:path';
import { type CommandResult, type CommandSandbox, runProjectCommand } from '../sandbox/command.js';

/** What the sandbox around the verification command fences (the run's own sandbox). */
export type VerifySandbox = CommandSandbox;
export type VerifyResult = CommandResult;

/**
 * Runs the project's verification command (`runs.verify`, a shell command line the person wrote,
 * like a package.json script) in the run's worktree, with the agent's environment, in the same
 * sandbox as the agent's own commands when the run has one. Never throws: a command that cannot
 * start or times out is a failed verification.
 */
export function runVerify(input: {
  readonly command: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly sandbox: VerifySandbox | null;
  /** Where the srt settings file may be written (private to agentbox). */
  readonly privateDir: string;
  readonly logFile: string;
  readonly timeoutMs: number;
  /** Aborted when the run ends: the command is stopped. */
  readonly signal?: AbortSignal;
}): Promise<VerifyResult> {
  const { privateDir, ...rest } = input;
  return runProjectCommand({ ...rest, settingsFile: path.join(privateDir, 'verify-sandbox.json') });
}
