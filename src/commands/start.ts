import type { CommandContext } from '../context.js';
import { type StartOptions, startSession } from '../interactive/start.js';

/** `agentbox start ["<task>"]`: an interactive session behind agentbox (src/interactive/start.ts). */
export function start(ctx: CommandContext, task: string | undefined, options: StartOptions): Promise<number> {
  return startSession(ctx, task, options);
}
