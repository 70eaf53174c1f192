import { type OwnedChild, type OwnedOptions, spawnOwned } from '../process/owned.js';

/**
 * Starts the Claude Code binary for a headless run or a supervisor decision, as a child agentbox
 * owns. Every model call of agentbox goes through Claude Code started here (or behind a pty in
 * pty.ts, or probed in bin.ts and probe.ts): agentbox itself never calls a model API
 * (test/unit/architecture.test.ts holds the code to it).
 */
export function spawnClaude(bin: string, args: readonly string[], options: OwnedOptions): OwnedChild {
  return spawnOwned(bin, args, options);
}
