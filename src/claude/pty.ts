import type * as NodePty from '@lydell/node-pty';
import { AgentboxError } from '../errors.js';

export type SpawnPty = typeof NodePty.spawn;

/** The package holding node-pty's prebuilt native module for this machine. */
export const PTY_BINARY = `@lydell/node-pty-${process.platform}-${process.arch}`;

/**
 * What to do when node-pty's native module is missing. It is prebuilt (nothing is compiled at
 * install) and comes as an optional dependency for each platform: `--omit=optional`, a
 * node_modules copied from another OS, or a platform with no prebuild leaves it out.
 */
export const PTY_FIX = `install agentbox again without --omit=optional, on this machine (node-pty's prebuilt module for ${process.platform}-${process.arch} is the optional dependency ${PTY_BINARY}); agentbox start is the only command that needs it`;

/**
 * node-pty's spawn, or an error saying how to get it. Loaded only here, when a command runs
 * something behind a pty (`agentbox start`, doctor's check): every other command works without it.
 */
export async function loadPty(): Promise<SpawnPty> {
  let mod: typeof NodePty & { default?: typeof NodePty };
  try {
    mod = (await import('@lydell/node-pty')) as typeof NodePty & { default?: typeof NodePty };
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
