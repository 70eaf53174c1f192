import type * as NodePty from 'node-pty';
import { AgentboxError } from '../errors.js';

export type SpawnPty = typeof NodePty.spawn;

/** What to do when node-pty's native module is missing: it is built by its install script. */
export const PTY_FIX =
  'rebuild it with install scripts allowed: npm rebuild node-pty (npm 12 blocks install scripts unless node-pty is in allowScripts)';

/**
 * node-pty's spawn, or an error saying how to get it: its native module is compiled when it is
 * installed, and a blocked install script or a missing compiler leaves it unloadable.
 */
export async function loadPty(): Promise<SpawnPty> {
  let mod: typeof NodePty & { default?: typeof NodePty };
  try {
    mod = (await import('node-pty')) as typeof NodePty & { default?: typeof NodePty };
  } catch (error) {
    throw new AgentboxError(
      'IO_FAILED',
      `interactive sessions need node-pty, whose native module did not load: ${(error as Error).message.split('\n')[0]}`,
      { hint: PTY_FIX },
    );
  }
  // CommonJS seen from ESM: the functions may sit on the default export.
  return mod.spawn ?? mod.default!.spawn;
}

export interface ClaudePtyOptions {
  readonly term: string;
  readonly cols: number;
  readonly rows: number;
  readonly cwd: string;
  readonly env: Record<string, string>;
}

/**
 * Starts the Claude Code binary behind a pty (interactive sessions). Claude Code is started from
 * src/claude/ only: headless runs and the supervisor through spawn.ts, sessions through here.
 */
export function spawnClaudePty(spawn: SpawnPty, bin: string, args: string[], o: ClaudePtyOptions) {
  return spawn(bin, args, { name: o.term, cols: o.cols, rows: o.rows, cwd: o.cwd, env: o.env });
}
