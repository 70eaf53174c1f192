// The two shapes every part of the command table takes (its own module: table.ts and table-remote.ts
// both use them, and neither imports the other's types back).
import type { CommandContext } from '../context.js';

/**
 * Whether the table defines a command: only the one being run when that is known (building all ~35
 * costs ~3 ms on every command, bench/status.bench.ts); every command for the help and suggestions.
 */
export type Wants = (name: string) => boolean;

/** Wraps a command's loader: the module is imported, and the watchdog run, when the command runs. */
export type Lazy = <A extends unknown[]>(
  load: () => Promise<(ctx: CommandContext, ...args: A) => Promise<number | undefined>>,
) => (...args: A) => Promise<void>;
