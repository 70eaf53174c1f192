import type { CommandContext } from '../context.js';

/** A run command's options as far as `--push` is concerned. */
export interface PushFlags {
  /** `--push` alone: true (the default remote); `--push <remote>`: its name. */
  readonly push?: boolean | string;
  readonly detach?: boolean;
  readonly json?: boolean;
}

/**
 * `agentbox <scout|plan|fix|review> "<task>" --push [<remote>]`: runs the command as it is, then
 * publishes the run it created (src/remote/publish-after.ts). Without --push the command just runs.
 */
export async function pushAfter<O extends PushFlags>(
  ctx: CommandContext,
  options: O,
  start: (options: Omit<O, 'push'>) => Promise<number>,
): Promise<number> {
  const { push, ...rest } = options;
  if (push === undefined || push === false) return start(rest);
  // Loaded only for --push: the remote's code (sharing, git transport) was ~12 ms of every run's
  // start before claude (bench/scout-overhead.bench.ts).
  const { publishAfter } = await import('./publish-after.js');
  return publishAfter(ctx, options, push, start);
}
