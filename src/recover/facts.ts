import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeConfigDir, findTranscript, transcriptHasMessages } from '../claude/transcript.js';
import { AgentboxError } from '../errors.js';
import { gitBusy } from '../git/checkpoint.js';
import { type Ledger, readMeta, readState } from '../ledger/index.js';
import type { RunState, RunType } from '../ledger/types.js';
import { isAlive } from '../process/reap.js';
import type { Env } from '../util/env.js';
import type { RecoveryFacts } from './decide.js';

/** What decideRecovery needs from meta.yaml: the run's type, and where it ran when fetched. */
export interface RunKind {
  readonly type: RunType;
  readonly origin?: { readonly host: string } | undefined;
}

/** The facts that are not in any file of the run: whether its supervisor lives, its worktree's git. */
export type LiveFacts = Pick<RecoveryFacts, 'supervisorAlive' | 'worktree'>;

/** The facts read from the run's own files (its transcript apart): they change when those do. */
export type FileFacts = Omit<RecoveryFacts, keyof LiveFacts | 'sessionResumable'>;

/**
 * recoveryFacts for the run `name`, from state.json, and meta.yaml only when state.json carries
 * no summary (the YAML parse alone cost more than all the rest of a run's facts, measured).
 */
export async function readRecoveryFacts(ledger: Ledger, name: string, env: Env): Promise<RecoveryFacts> {
  const dir = path.join(ledger.runsDir, name);
  const state = runState(dir, name);
  return recoveryFacts(dir, runKind(dir, name, state), state, env);
}

export function runState(dir: string, name: string): RunState {
  const state = readState(dir);
  if (!state) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no state.json`);
  return state;
}

/** The type and origin meta.yaml holds, from state.json's copy of them when it has one. */
export function runKind(dir: string, name: string, state: RunState): RunKind {
  const { summary } = state;
  if (summary) return { type: summary.type, origin: summary.ran_on ? { host: summary.ran_on } : undefined };
  const meta = readMeta(dir);
  if (!meta) throw new AgentboxError('RUN_CORRUPT', `run ${name} has no meta.yaml`);
  return meta;
}

/** Reads what decideRecovery needs about one run from its files, its worktree and its session. */
export async function recoveryFacts(
  runDir: string,
  meta: RunKind,
  state: RunState,
  env: Env,
): Promise<RecoveryFacts> {
  const transcript = transcriptOf(state, env);
  return withLive(
    fileFacts(runDir, meta, state),
    transcript !== null && transcriptHasMessages(transcript),
    await liveFacts(state),
  );
}

/** The facts in their usual order (they are recorded as they are in events.jsonl). */
export function withLive(files: FileFacts, sessionResumable: boolean, live: LiveFacts): RecoveryFacts {
  const { status, type, failureKind, streamWhole, hasCheckpoint, attempts, ranElsewhere } = files;
  const { supervisorAlive, worktree } = live;
  return {
    status,
    type,
    failureKind,
    supervisorAlive,
    sessionResumable,
    streamWhole,
    worktree,
    hasCheckpoint,
    attempts,
    ranElsewhere,
  };
}

export function fileFacts(runDir: string, meta: RunKind, state: RunState): FileFacts {
  return {
    status: state.status,
    type: meta.type,
    failureKind: state.failure?.kind ?? null,
    streamWhole: streamEndsWhole(path.join(runDir, 'raw', 'stream.jsonl')),
    hasCheckpoint: Boolean(state.checkpoint),
    attempts: recoveryAttempts(runDir),
    ranElsewhere: meta.origin?.host ?? null,
  };
}

/** The session's transcript file, or null (no session, or claude kept no transcript of it). */
export function transcriptOf(state: Pick<RunState, 'session_id'>, env: Env): string | null {
  return state.session_id ? findTranscript(claudeConfigDir(env, os.homedir()), state.session_id) : null;
}

/** What liveFacts and transcriptOf look at: the run's processes, worktree and session. */
export type RunProcesses = Pick<RunState, 'pid' | 'pid_start' | 'worktree_path' | 'session_id'>;

export async function liveFacts(state: RunProcesses): Promise<LiveFacts> {
  const worktree = state.worktree_path ? await worktreeFacts(state.worktree_path) : null;
  return { supervisorAlive: isAlive(state.pid, state.pid_start), worktree };
}

export async function worktreeFacts(worktree: string): Promise<NonNullable<RecoveryFacts['worktree']>> {
  const exists = fs.existsSync(worktree);
  return { exists, busy: exists ? await gitBusy(worktree) : null };
}
/** True when the file is empty or missing, or ends with a newline after a line that parses. */
export function streamEndsWhole(file: string): boolean {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    return true;
  }
  if (size === 0) return true;
  const length = Math.min(size, 1024 * 1024);
  const buffer = Buffer.alloc(length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, buffer, 0, length, size - length);
  } finally {
    fs.closeSync(fd);
  }
  const text = buffer.toString('utf8');
  if (!text.endsWith('\n')) return false;
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  try {
    JSON.parse(last);
    return true;
  } catch {
    return false;
  }
}

/** How many times `recover` resumed or replayed the run (its events.jsonl says). */
export function recoveryAttempts(runDir: string): number {
  let text: string;
  try {
    text = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8');
  } catch {
    return 0;
  }
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"recover"')) continue;
    try {
      const event = JSON.parse(line) as { event?: string; action?: string };
      if (event.event === 'recover' && (event.action === 'resume' || event.action === 'rollback_replay'))
        count++;
    } catch {
      // A cut line.
    }
  }
  return count;
}
