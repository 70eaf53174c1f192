import { AsyncLocalStorage } from 'node:async_hooks';
import type { Env } from '../util/env.js';

/*
 * The process a command runs for: its pid, which a run records as its own (its state's `pid`, which
 * `agentbox stop` signals and the watchdog checks for life), and its environment, which a child
 * started without one inherits. That is this process, except for a command a resident agentbox
 * runs for another (`agentbox serve`, src/resident/connection.ts): the agentbox process the person
 * started, which forwards its signals to the resident one, and that process's environment.
 */
interface Owner {
  readonly pid: number;
  readonly env: Env;
  /** Takes work the command need not do before its exit code is sent (see `afterReply`). */
  readonly later?: (work: () => Promise<unknown>) => void;
}

const owner = new AsyncLocalStorage<Owner>();

/** The pid a run started now records as its process. */
export function ownerPid(): number {
  return owner.getStore()?.pid ?? process.pid;
}

/** The environment a child inherits when it is given none. */
export function ownerEnv(): Env {
  return owner.getStore()?.env ?? process.env;
}

/**
 * Runs `fn` (and everything it starts, asynchronously too) on behalf of process `pid`, in `env`;
 * `later` takes the work it leaves for after its reply.
 */
export function onBehalfOf<T>(
  pid: number,
  env: Env,
  fn: () => T,
  later?: (work: () => Promise<unknown>) => void,
): T {
  return owner.run({ pid, env, ...(later ? { later } : {}) }, fn);
}

/** Whether this command is served for another process (`agentbox serve`): this process outlives it. */
export function servedForAnother(): boolean {
  return owner.getStore()?.later !== undefined;
}

/**
 * Cleanup a command's answer does not wait for: a run's release, once its end is recorded. A
 * command served for another process (`agentbox serve`) sends its exit code first and does the
 * work after it (the server waits for it before it stops); anywhere else it is done here, so a
 * process that exits has done it.
 */
export async function afterReply(work: () => Promise<unknown>): Promise<void> {
  const later = owner.getStore()?.later;
  if (later) later(work);
  else await work();
}
