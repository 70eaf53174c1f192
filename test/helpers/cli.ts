import { run } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the agentbox CLI in-process, as a user would type it, with a given cwd and env. */
export async function agentbox(
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliResult> {
  const io = memoryIo();
  const env = options.env ?? { PATH: process.env.PATH, HOME: options.cwd };
  const code = await run(argv, { cwd: options.cwd, env, io });
  return { code, stdout: io.stdout, stderr: io.stderr };
}
