import fs from 'node:fs';
import { run as cli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { GIT_ENV, tempDir } from './git-repo.js';
import type { Origin } from './remote.js';

/**
 * One machine of a team sharing `o` (a runner, a laptop): a clone with a ledger and its own HOME,
 * where `agentbox` runs in-process, so runs published by one can be fetched by another. No Claude
 * Code: the runs are written with the ledger's functions (test/helpers/machines.ts has machines that
 * run the real one). Its HOME goes when the test ends (tempDir), its clone with `o.cleanup()`.
 */
export function machine(o: Origin, name: string) {
  const repo = o.clone(name);
  ensureLedger(repo.dir);
  const env: Record<string, string | undefined> = {
    ...GIT_ENV,
    PATH: process.env.PATH,
    HOME: tempDir('agentbox-home-'),
    AGENTBOX_HOST: `${name}.example`,
  };
  const ledger = openLedger(repo.dir);
  return {
    repo,
    ledger,
    env,
    /** Every ref of the clone, by full name. */
    refs: () => repo.git('for-each-ref', '--format=%(refname)').split('\n').filter(Boolean),
    /** The run folders of its ledger, by name. */
    runs: () => fs.readdirSync(ledger.runsDir).sort(),
    /** `agentbox <argv>` here; `answers` for its questions, in order. */
    async agentbox(argv: string[], answers?: string[]) {
      const io = memoryIo(answers ? { answers } : {});
      const code = await cli(argv, { cwd: repo.dir, env, io });
      return { code, stdout: io.stdout, stderr: io.stderr };
    },
  };
}
