import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandContext } from '../context.js';
import { type Ledger, runIdOf, updateState } from '../ledger/index.js';
import { processStartTime } from '../process/reap.js';
import { openAppend } from '../util/append.js';
import { terminalJson } from '../util/json-out.js';

/** The built CLI entry, for starting a worker (`src/run` and `dist/run` both sit two levels down). */
const BIN = fileURLToPath(new URL('../../bin/agentbox.cjs', import.meta.url));

/**
 * How long a worker waits for the command that started it to record it (its pid in the state)
 * before it goes on alone: that command was killed, or hangs. Its own claim records it then.
 */
export const HAND_OVER_WAIT_MS = 60_000;

/**
 * Starts `agentbox <args>` as a background worker in its own session, its output appended to
 * `logFile`, has `record` write its pid where the run's (or group's) state says who runs it, and
 * only then lets it go on (closes its stdin: `awaitHandOver`). Returns the worker's pid.
 *
 * NOTE: the worker writes the same state file (a group's members as its attempts start, a run's
 * progress); had it started before `record` wrote, the read-modify-write of one of the two would
 * have dropped the other's change — a busy machine lost a group's first attempt so. One writer at
 * a time: the parent until the hand-over, the worker after.
 */
export async function spawnWorker(
  ctx: CommandContext,
  root: string,
  args: readonly string[],
  logFile: string,
  record: (pid: number | undefined) => Promise<unknown>,
): Promise<number | undefined> {
  const log = openAppend(logFile);
  let worker: ReturnType<typeof spawn>;
  try {
    worker = spawn(process.execPath, [BIN, ...args], {
      cwd: root,
      env: ctx.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['pipe', log, log],
    });
  } finally {
    fs.closeSync(log);
  }
  // A worker that died at once closes its end first: nothing to hand over then.
  worker.stdin?.on('error', () => {});
  try {
    await record(worker.pid);
  } finally {
    worker.stdin?.end();
    worker.unref();
  }
  return worker.pid;
}

/**
 * The worker's side of the hand-over: resolves once the command that started it has recorded it
 * (it closed the worker's stdin), or at once when stdin is a terminal (a person ran the worker by
 * hand), or after `waitMs` when nobody closes it.
 */
export function awaitHandOver(
  input: (NodeJS.ReadableStream & { isTTY?: boolean; destroy?: () => void }) | undefined,
  waitMs = HAND_OVER_WAIT_MS,
): Promise<void> {
  if (!input || input.isTTY) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      input.removeListener('end', done);
      input.removeListener('close', done);
      input.removeListener('error', done);
      input.destroy?.();
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    timer.unref();
    input.on('end', done);
    input.on('close', done);
    input.on('error', done);
    // Whatever arrives is read and dropped: only the end of the stream counts.
    input.on('data', () => {});
    input.resume();
  });
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
  /** More of the worker's arguments (`--revision`: it goes on with the run's revision, agentbox revise). */
  more: readonly string[] = [],
): Promise<number> {
  const logFile = path.join(ledger.runsDir, name, 'raw', 'agentbox.log');
  await spawnWorker(ctx, ledger.root, ['__exec', name, ...more], logFile, (pid) =>
    updateState(
      ledger,
      name,
      { pid: pid ?? null, pid_start: pid ? processStartTime(pid) : null },
      { event: 'detached', detail: `worker pid ${pid}` },
    ),
  );
  if (json) ctx.io.out(`${terminalJson({ run: name, detached: true })}\n`);
  else {
    const id = runIdOf(name);
    ctx.io.out(
      `${name}\n  running in the background — follow it: agentbox watch ${id} · stop it: agentbox stop ${id}\n`,
    );
  }
  return 0;
}
