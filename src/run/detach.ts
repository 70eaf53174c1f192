import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandContext } from '../context.js';
import { type Ledger, runIdOf, updateState } from '../ledger/index.js';
import { processStartTime } from '../process/reap.js';

/** The built CLI entry, for starting a worker (`src/run` and `dist/run` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.cjs', import.meta.url));

/**
 * Hands the run to a background worker (`agentbox __exec <run>`) in its own session, with its
 * output in the run's raw/agentbox.log, and returns at once.
 */
export async function detachRun(
  ctx: CommandContext,
  ledger: Ledger,
  name: string,
  json: boolean,
): Promise<number> {
  const logFile = path.join(ledger.runsDir, name, 'raw', 'agentbox.log');
  const log = fs.openSync(logFile, 'a');
  try {
    const worker = spawn(process.execPath, [BIN, '__exec', name], {
      cwd: ledger.root,
      env: ctx.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', log, log],
    });
    worker.unref();
    await updateState(
      ledger,
      name,
      { pid: worker.pid ?? null, pid_start: worker.pid ? processStartTime(worker.pid) : null },
      { event: 'detached', detail: `worker pid ${worker.pid}` },
    );
  } finally {
    fs.closeSync(log);
  }
  if (json) ctx.io.out(`${JSON.stringify({ run: name, detached: true })}\n`);
  else {
    const id = runIdOf(name);
    ctx.io.out(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
  }
  return 0;
}
