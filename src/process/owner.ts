import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * The process that stands for a command: the one a run records as its own (its state's `pid`),
 * which `agentbox stop` signals and the watchdog checks for life. That is this process, except for a
 * command that a resident agentbox runs for another (`agentbox serve`, src/cli/serve.ts): the
 * agentbox process the person started, which forwards its signals to the resident one.
 */
const owner = new AsyncLocalStorage<number>();

/** The pid a run started now records as its process. */
export function ownerPid(): number {
  return owner.getStore() ?? process.pid;
}

/** Runs `fn` (and everything it starts, asynchronously too) on behalf of process `pid`. */
export function onBehalfOf<T>(pid: number, fn: () => T): T {
  return owner.run(pid, fn);
}
