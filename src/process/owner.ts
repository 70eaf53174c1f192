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

/** Runs `fn` (and everything it starts, asynchronously too) on behalf of process `pid`, in `env`. */
export function onBehalfOf<T>(pid: number, env: Env, fn: () => T): T {
  return owner.run({ pid, env }, fn);
}
