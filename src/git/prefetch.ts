import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * git reads a command starts early, so their answers are there when it needs them: a run's start
 * asks git a few things its later steps would otherwise ask one round after another (a scout's
 * private git, src/git/private.ts). Scoped to one command (an AsyncLocalStorage): an answer is
 * taken once, by the same command that asked for it, never by a later one, so none is stale.
 */

type Answer = Promise<{ exitCode: number; stdout: Buffer; stderr: string; cut?: true }>;

const scope = new AsyncLocalStorage<Map<string, Answer>>();

/** Runs `fn` with a scope of its own for prefetched answers (a run's start, to its end). */
export function prefetchScope<T>(fn: () => T): T {
  return scope.run(new Map(), fn);
}

/** Whether this command keeps prefetched answers (a key is worth making). */
export function inPrefetchScope(): boolean {
  return scope.getStore() !== undefined;
}

/** Starts `ask` now and keeps its answer under `key`, when inside a scope; else nothing. */
export function prefetch(key: string, ask: () => Answer): void {
  const answers = scope.getStore();
  if (!answers || answers.has(key)) return;
  answers.set(key, ask());
}

/** The answer kept under `key`, once. */
export function takePrefetched(key: string): Answer | undefined {
  const answers = scope.getStore();
  const answer = answers?.get(key);
  if (answer) answers!.delete(key);
  return answer;
}
