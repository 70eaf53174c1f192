import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../../config/duration.js';
import type { Config } from '../../config/schema.js';
import type { CommandContext } from '../../context.js';
import { EventLog } from '../../ledger/events.js';
import { readState, runIdOf } from '../../ledger/index.js';
import type { RunMeta } from '../../ledger/types.js';
import { type NotifySettings, notifyPerson } from '../../notify/notify.js';
import { notifyPayload } from '../../notify/payload.js';
import { nextStep } from '../../present/next-step.js';
import type { Finalized } from './finalize.js';

export function notifySettings(config: Config): NotifySettings {
  return {
    command: config.runs.notify,
    timeoutMs: parseDuration(config.runs.notify_timeout) ?? 10_000,
    bell: config.runs.notify_bell,
  };
}

/** A headless run has ended: ring the terminal that started it and run `runs.notify`. */
export async function notifyRunEnd(
  ctx: CommandContext,
  config: Config,
  root: string,
  runDir: string,
  meta: RunMeta,
  done: Finalized,
  /** --json: stdout is one JSON document, so no bell in it. */
  json: boolean,
): Promise<void> {
  const state = readState(runDir);
  if (!state) return;
  await notifyPerson({
    io: ctx.io,
    env: ctx.env,
    cwd: root,
    record: (event) => new EventLog(runDir).append(event),
    settings: { ...notifySettings(config), bell: config.runs.notify_bell && !json },
    payload: notifyPayload({
      event: 'ended',
      name: done.name,
      type: meta.type,
      task: meta.task,
      state,
      changes: done.changes?.files.length ?? 0,
      report: done.files.includes('report.md') ? path.join(runDir, 'report.md') : null,
      next: nextStep(done.status, runIdOf(done.name), done.failure),
    }),
  });
}

/**
 * An interactive session waits for the person (its claude is idle after a turn), or has ended:
 * ring its terminal and run `runs.notify`, as for a headless run.
 */
export async function notifySession(
  ctx: CommandContext,
  config: Config,
  root: string,
  runDir: string,
  meta: RunMeta,
  event: 'waiting' | 'ended',
): Promise<void> {
  const state = readState(runDir);
  if (!state) return;
  const id = runIdOf(meta.run_name);
  await notifyPerson({
    io: ctx.io,
    env: ctx.env,
    cwd: root,
    record: (e) => new EventLog(runDir).append(e),
    settings: notifySettings(config),
    payload: notifyPayload({
      event,
      name: meta.run_name,
      type: meta.type,
      task: meta.task,
      state,
      changes: 0,
      report: fs.existsSync(path.join(runDir, 'report.md')) ? path.join(runDir, 'report.md') : null,
      next:
        event === 'waiting'
          ? `answer it in its terminal, or: agentbox inject ${id} "<text>"`
          : `agentbox start --resume ${id}`,
    }),
  });
}
