import { EventLog } from '../../ledger/events.js';

/**
 * `write` once, the first time it is asked for; a failure is logged in the run's events, not
 * thrown: INDEX.md is derived (INDEX.jsonl holds the run) and rewritten at the run's next status.
 */
export function onceStarted(write: () => Promise<void>, runDir: string): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= write().catch((error) =>
      new EventLog(runDir).append({ event: 'index_md_failed', error: (error as Error).message }),
    );
    return done;
  };
}
