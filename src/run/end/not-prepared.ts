import path from 'node:path';
import { updateState } from '../../ledger/index.js';
import { writeAtomic } from '../../util/fs.js';
import type { ExecuteInput } from '../begin/input.js';
import { renderEndReport } from './report.js';

/**
 * A run that could not be prepared (its slash commands, private area or endpoint) ends CRASHED with
 * a report saying why, before the error is thrown on: not ACTIVE with nobody running it, for the
 * watchdog to find later as "the supervisor is gone".
 */
export async function notPrepared(input: ExecuteInput, error: unknown): Promise<never> {
  const message = `could not prepare the run: ${(error as Error).message}`;
  const { ledger, meta } = input;
  await writeAtomic(
    path.join(ledger.runsDir, meta.run_name, 'report.md'),
    renderEndReport({ meta, status: 'CRASHED', detail: `crashed: ${message}`, next: null }),
  ).catch(() => {});
  await updateState(
    ledger,
    { name: meta.run_name, meta },
    {
      status: 'CRASHED',
      ended_at: new Date().toISOString(),
      failure: { kind: 'crashed', message },
    },
  ).catch(() => {});
  throw error;
}
