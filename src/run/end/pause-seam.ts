import path from 'node:path';
import { writeAtomic } from '../../util/fs.js';
import type { FinalizePart } from './finalize.js';

/**
 * The test seam behind `AGENTBOX_TEST_PAUSE=finalize:<part>`: after that part, a marker file
 * `paused-<part>` appears in the run folder and this process waits until it is killed. Unset (as
 * for every user), finalisation never waits.
 */
export function pauseSeam(
  value: string | undefined,
  runDir: string,
): ((part: FinalizePart) => Promise<void>) | undefined {
  const part = value?.startsWith('finalize:') ? value.slice('finalize:'.length) : undefined;
  if (!part) return undefined;
  return async (done) => {
    if (done !== part) return;
    await writeAtomic(path.join(runDir, `paused-${done}`), `${process.pid}\n`);
    await new Promise(() => setInterval(() => {}, 1 << 30));
  };
}
