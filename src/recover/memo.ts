import fs from 'node:fs';
import path from 'node:path';
import { transcriptHasMessages } from '../claude/transcript.js';
import { type Ledger, listRuns, type RunSummary } from '../ledger/index.js';
import { clockNs, runsStamp, settled } from '../ledger/names-cache.js';
import { isAlive } from '../process/reap.js';
import type { Env } from '../util/env.js';
import { type Decision, decideRecovery } from './decide.js';
import {
  type FileFacts,
  fileFacts,
  type RunProcesses,
  runKind,
  runState,
  transcriptOf,
  withLive,
  worktreeFacts,
} from './facts.js';

/*
 * Recovery facts for a caller that asks again and again (the web UI, on every page load), read
 * once and kept with what they were read from, so that an unchanged ledger costs a stat per run:
 * - the runs to decide, with the ledger's stamp: INDEX.jsonl's identity, size and mtime (every
 *   status change is a line there) and runs/'s (a run folder that comes or goes changes it);
 * - each run's facts, with the signature of every file they came from (state.json, the stream,
 *   meta.yaml when state.json has no summary, events.jsonl, the session's transcript).
 * A run whose supervisor was dead before it was read is written only by commands that change its
 * status (a new ledger stamp), but for `recover` and `resume`, which append their decision to
 * events.jsonl first and may fail after: under the same stamp only events.jsonl and the transcript
 * are looked at again. Any other run, or under a new stamp, all its files are. Whether the
 * supervisor lives and the worktree's git state are in no run file: looked at on every call.
 * Signatures are taken before reading, so a write meanwhile shows as a difference next time.
 */

/** What was read of one run, with the signatures of the files it was read from. */
interface Kept {
  readonly dir: string;
  readonly eventsFile: string;
  /** state.json, raw/stream.jsonl and, when it was read, meta.yaml. */
  readonly files: string;
  readonly events: string;
  readonly withMeta: boolean;
  /** Its supervisor was dead, and nothing changed, while its files were read. */
  readonly quiet: boolean;
  /** The ledger stamp under which `files` were last found the same. */
  stamp: string;
  readonly processes: RunProcesses;
  readonly facts: FileFacts;
  session: { readonly file: string; readonly signature: string; readonly resumable: boolean } | null;
  /** The last decision: given again, the same object, while no fact changed. */
  decision: Decision | null;
}

/** A file's identity, size and mtime; '-' when it does not exist. */
function signature(file: string): string {
  const s = fs.statSync(file, { throwIfNoEntry: false });
  return s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}` : '-';
}

function fileSignatures(dir: string, withMeta: boolean): string {
  const files = ['state.json', path.join('raw', 'stream.jsonl'), ...(withMeta ? ['meta.yaml'] : [])];
  return files.map((f) => signature(path.join(dir, f))).join('|');
}

export class RecoveryMemo {
  private stamp = '';
  private listed: { only: (run: RunSummary) => boolean; names: string[] } | null = null;
  private readonly runs = new Map<string, Kept>();

  /** The runs `only` accepts, oldest first (the order `agentbox recover` decides them in). */
  names(ledger: Ledger, only: (run: RunSummary) => boolean): string[] {
    const runsStat = fs.statSync(ledger.runsDir, { bigint: true, throwIfNoEntry: false });
    const stamp = `${signature(ledger.indexJsonl)}|${runsStat ? runsStamp(runsStat) : '-'}`;
    if (stamp === this.stamp && this.listed?.only === only) return this.listed.names;
    const listedAt = clockNs();
    const names = listRuns(ledger, {})
      .runs.filter(only)
      .map((r) => r.name)
      .reverse();
    // NOTE: runs/'s mtime may not move for a folder made in the same clock tick as this listing.
    const keep = runsStat !== undefined && settled(runsStat, listedAt);
    this.stamp = keep ? stamp : '';
    this.listed = keep ? { only, names } : null;
    const wanted = new Set(names);
    for (const name of this.runs.keys()) if (!wanted.has(name)) this.runs.delete(name);
    return names;
  }

  /** The decision for a run `names` returned, from what was kept while its files are the same. */
  async decision(ledger: Ledger, name: string, env: Env): Promise<Decision> {
    let kept = this.runs.get(name);
    if (!kept || !this.same(kept)) {
      kept = read(path.join(ledger.runsDir, name), name, this.stamp);
      this.runs.set(name, kept);
    }
    const { pid, pid_start, worktree_path } = kept.processes;
    const sessionResumable = resumable(kept, env);
    const supervisorAlive = isAlive(pid, pid_start);
    const worktree = worktree_path ? await worktreeFacts(worktree_path) : null;
    const last = kept.decision?.facts;
    if (
      last?.sessionResumable === sessionResumable &&
      last.supervisorAlive === supervisorAlive &&
      last.worktree?.exists === worktree?.exists &&
      last.worktree?.busy === worktree?.busy
    )
      return kept.decision!;
    const facts = withLive(kept.facts, sessionResumable, { supervisorAlive, worktree });
    kept.decision = { name, facts, action: decideRecovery(facts) };
    return kept.decision;
  }

  private same(kept: Kept): boolean {
    if (signature(kept.eventsFile) !== kept.events) return false;
    if (kept.quiet && kept.stamp !== '' && kept.stamp === this.stamp) return true;
    if (fileSignatures(kept.dir, kept.withMeta) !== kept.files) return false;
    kept.stamp = this.stamp;
    return true;
  }
}

function read(dir: string, name: string, stamp: string): Kept {
  const eventsFile = path.join(dir, 'events.jsonl');
  const events = signature(eventsFile);
  const before = fileSignatures(dir, false);
  const state = runState(dir, name);
  const withMeta = !state.summary;
  const files = withMeta ? `${before}|${signature(path.join(dir, 'meta.yaml'))}` : before;
  const facts = fileFacts(dir, runKind(dir, name, state), state);
  // A supervisor dead now writes no more; one that wrote while its run was read left a difference.
  const quiet = !isAlive(state.pid, state.pid_start) && fileSignatures(dir, false) === before;
  const { pid, pid_start, worktree_path, session_id } = state;
  const processes = { pid, pid_start, worktree_path, session_id };
  return {
    dir,
    eventsFile,
    files,
    events,
    withMeta,
    quiet,
    stamp,
    processes,
    facts,
    session: null,
    decision: null,
  };
}

/** The transcript is claude's: found again until it is there, read again when it changed. */
function resumable(kept: Kept, env: Env): boolean {
  if (kept.session && signature(kept.session.file) === kept.session.signature) return kept.session.resumable;
  const file = transcriptOf(kept.processes, env);
  if (file === null) {
    kept.session = null;
    return false;
  }
  kept.session = { file, signature: signature(file), resumable: transcriptHasMessages(file) };
  return kept.session.resumable;
}
