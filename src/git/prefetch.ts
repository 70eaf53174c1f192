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
  return scope.run(new Map(), () => kept.run(new Map(), fn));
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

const kept = new AsyncLocalStorage<Map<string, Promise<unknown>>>();

/**
 * `make()`'s answer, made once per command scope (prefetchScope) and given to every step that asks
 * for `key` (a run's check before it starts, then its sandbox); outside a scope, made each time.
 */
export function keptAnswer<T>(key: string, make: () => Promise<T>): Promise<T> {
  const answers = kept.getStore();
  if (!answers) return make();
  let answer = answers.get(key) as Promise<T> | undefined;
  if (!answer) {
    answer = make();
    // (a step that starts it early may not wait for it: its failure is the waiting step's)
    answer.catch(() => {});
    answers.set(key, answer);
  }
  return answer;
}
