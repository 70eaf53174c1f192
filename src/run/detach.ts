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
 * Starts `agentbox <args>` as a background worker in its own session, its output appended to
 * `logFile`, and returns its pid (a run's worker, and a group's: src/group/start.ts).
 */
export function spawnWorker(ctx: CommandContext, root: string, args: readonly string[], logFile: string) {
  const log = fs.openSync(logFile, 'a');
  try {
    const worker = spawn(process.execPath, [BIN, ...args], {
      cwd: root,
      env: ctx.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['ignore', log, log],
    });
    worker.unref();
    return worker.pid;
  } finally {
    fs.closeSync(log);
  }
}

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
  const pid = spawnWorker(ctx, ledger.root, ['__exec', name], logFile);
  await updateState(
    ledger,
    name,
    { pid: pid ?? null, pid_start: pid ? processStartTime(pid) : null },
    { event: 'detached', detail: `worker pid ${pid}` },
  );
  if (json) ctx.io.out(`${JSON.stringify({ run: name, detached: true })}\n`);
  else {
    const id = runIdOf(name);
    ctx.io.out(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
  }
  return 0;
}
