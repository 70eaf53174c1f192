import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeConfigDir, findTranscript, transcriptHasMessages } from '../claude/transcript.js';
import { gitBusy } from '../git/checkpoint.js';
import type { RunMeta, RunState } from '../ledger/types.js';
import { isAlive } from '../process/reap.js';
import type { Env } from '../util/env.js';
import type { RecoveryFacts } from './decide.js';

/** Reads what decideRecovery needs about one run from its files, its worktree and its session. */
export async function recoveryFacts(
  runDir: string,
  meta: RunMeta,
  state: RunState,
  env: Env,
): Promise<RecoveryFacts> {
  const transcript = state.session_id
    ? findTranscript(claudeConfigDir(env, os.homedir()), state.session_id)
    : null;
  let worktree: RecoveryFacts['worktree'] = null;
  if (state.worktree_path) {
    const exists = fs.existsSync(state.worktree_path);
    worktree = { exists, busy: exists ? await gitBusy(state.worktree_path) : null };
  }
  return {
    status: state.status,
    type: meta.type,
    failureKind: state.failure?.kind ?? null,
    supervisorAlive: isAlive(state.pid, state.pid_start),
    sessionResumable: transcript !== null && transcriptHasMessages(transcript),
    streamWhole: streamEndsWhole(path.join(runDir, 'raw', 'stream.jsonl')),
    worktree,
    hasCheckpoint: Boolean(state.checkpoint),
    attempts: recoveryAttempts(runDir),
    ranElsewhere: meta.origin?.host ?? null,
  };
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
