import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { afterReply, ownerPid } from '../process/owner.js';
import { processStartTime } from '../process/reap.js';
import { markActive, unmarkActive } from './active.js';
import { corruptFile } from './check.js';
import type { RunHandle } from './create.js';
import { appendIndexEvent, makeIndexEvent } from './index-log.js';
import { regenerateIndexMd } from './index-md.js';
import { pointerForStatus, setPointer } from './links.js';
import { META_FILE, readMeta } from './meta.js';
import { isRunName, quoteRef, validateRunRef } from './names.js';
import type { Ledger } from './paths.js';
import { applyStatePatch, readState, type StatePatch } from './state.js';
import { writeState } from './state-write.js';
import type { RunMeta, RunState } from './types.js';

export interface StateEvent {
  readonly event: string;
  readonly detail?: string;
}

/**
 * NOTE: one queue per run folder, in this process only. Read-modify-write of state.json is safe
 * because a run has exactly one writer process (its supervisor); the queue orders that process's
 * own overlapping updates. Two processes updating one run would lose updates (never tear a file).
 */
const queues = new Map<string, Promise<unknown>>();

function enqueue<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(task);
  queues.set(key, next);
  const forget = () => {
    if (queues.get(key) === next) queues.delete(key);
  };
  next.then(forget, forget);
  return next;
}

/**
 * A run taken up again (resume, recover, start --resume) by this process: ACTIVE, supervised by
 * this process from now, with a fresh heartbeat. All at once, so the watchdog of a concurrent
 * command never sees an ACTIVE run with the old, dead supervisor (or an old heartbeat) and marks
 * it crashed again while it starts.
 */
export function reactivated(at: Date = new Date()): StatePatch {
  return {
    status: 'ACTIVE',
    failure: null,
    ended_at: null,
    pid: ownerPid(),
    pid_start: processStartTime(ownerPid()),
    last_heartbeat: at.toISOString(),
  };
}

/** How often a live run's supervisor (headless, setup step, interactive session) writes a heartbeat. */
export const HEARTBEAT_MS = 15_000;

/**
 * A heartbeat: the supervisor is alive and working. A run the watchdog marked STALLED while its
 * supervisor was merely slow (a suspended laptop, a stopped process) becomes ACTIVE again.
 */
export function heartbeat(at: Date, extra: StatePatch = {}): (current: RunState) => StatePatch {
  return (current) => ({
    ...extra,
    last_heartbeat: at.toISOString(),
    ...(current.status === 'STALLED' && current.failure?.kind === 'stalled'
      ? { status: 'ACTIVE', failure: null, ended_at: null }
      : {}),
  });
}

/**
 * Applies `patch` (or what `patch` makes of the current state) to a run's state.json atomically and returns the new state (`run` is not
 * changed). A status change (or an explicit `event`) appends an INDEX.jsonl event; a status change
 * also rewrites INDEX.md and moves the pointer that follows the new status (last-fail …).
 */
export async function updateState(
  ledger: Ledger,
  /** A run's name, or its name and meta (known: meta.yaml is not parsed again, ~15 ms the first time in a process). */
  run: Pick<RunHandle, 'name' | 'meta'> | string,
  patch: StatePatch | ((current: RunState) => StatePatch | null),
  event?: StateEvent,
  options: { now?: Date } = {},
): Promise<RunState> {
  const name = typeof run === 'string' ? validateRunRef(run) : run.name;
  if (!isRunName(name)) {
    throw new AgentboxError('RUN_NAME_INVALID', `invalid run name ${quoteRef(name)}: not a run folder name`);
  }
  const dir = path.join(ledger.runsDir, name);
  const meta = typeof run === 'string' ? undefined : run.meta;
  return enqueue(dir, () => apply(ledger, name, dir, meta, patch, event, options.now ?? new Date()));
}

async function apply(
  ledger: Ledger,
  name: string,
  dir: string,
  knownMeta: RunMeta | undefined,
  patch: StatePatch | ((current: RunState) => StatePatch | null),
  event: StateEvent | undefined,
  now: Date,
): Promise<RunState> {
  const current = readState(dir);
  if (!current) {
    throw new AgentboxError('RUN_NOT_FOUND', `run ${name} has no state.json in ${ledger.runsDir}`, {
      hint: 'run "agentbox status" to list runs',
    });
  }
  const change = typeof patch === 'function' ? patch(current) : patch;
  // A patch function that returns null found the state no longer what it expected: no write, no event.
  if (change === null) return current;
  const next = applyStatePatch(current, change, now);
  const statusChanged = next.status !== current.status;
  // meta.yaml is read before writing so that a run without one changes nothing.
  const meta = statusChanged || event ? (knownMeta ?? requireMeta(dir)) : undefined;
  if (next.status === 'ACTIVE' && statusChanged) markActive(ledger, name);
  await writeState(dir, next);
  // A STALLED run keeps its marker: its process may still die, and only the watchdog, which reads
  // the markers, would find that (a stalled run whose process died stayed STALLED, its claude on).
  if (next.status !== 'ACTIVE' && next.status !== 'STALLED' && statusChanged) unmarkActive(ledger, name);
  if (!meta) return next;
  const detail = event?.detail ?? (statusChanged ? next.failure?.message : undefined);
  appendIndexEvent(
    ledger,
    makeIndexEvent(meta, next, event?.event ?? next.status.toLowerCase(), detail, now),
  );
  if (statusChanged) {
    const pointer = pointerForStatus(next.status);
    if (pointer) setPointer(ledger, pointer, name);
    // INDEX.md is a view for people, rendered from INDEX.jsonl (appended above): a run's start
    // waits for it (the view shows the run at work), a served command's end sends its exit code
    // first (src/process/owner.ts; the next render repairs one that failed there).
    if (next.status === 'ACTIVE') await regenerateIndexMd(ledger);
    else await afterReply(() => regenerateIndexMd(ledger));
  }
  return next;
}

function requireMeta(dir: string): RunMeta {
  const meta = readMeta(dir);
  if (!meta) throw corruptFile(path.join(dir, META_FILE), new Error('the file is missing'));
  return meta;
}
