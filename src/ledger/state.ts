import path from 'node:path';
import { errnoCode, fsError } from '../errors.js';
import { processStartTime } from '../process/reap.js';
import { readOwnFile } from '../util/read-own.js';
import {
  amount,
  corruptFile,
  count,
  intOrNull,
  obj,
  oneOf,
  ShapeError,
  schemaVersion,
  str,
  strOrNull,
} from './check.js';
import { shortTask } from './text.js';
import {
  type AttemptOf,
  type Checkpoint,
  FAILURE_KINDS,
  type Failure,
  RUN_STATUSES,
  RUN_TYPES,
  type RunMeta,
  type RunOutput,
  type RunPublication,
  type RunRevision,
  type RunSetup,
  type RunState,
  type RunUsage,
  type Spend,
} from './types.js';

export const STATE_FILE = 'state.json';
export const STATE_SCHEMA_VERSION = 1;

export type StatePatch = Partial<Omit<RunState, 'schema_version'>>;

export function initialState(meta: RunMeta, now: Date, pid: number | null): RunState {
  const at = now.toISOString();
  return {
    schema_version: 1,
    status: 'ACTIVE',
    pid,
    // A pid is trusted only with its start time: pids are reused.
    pid_start: pid === null ? null : processStartTime(pid),
    claude_pid: null,
    claude_pid_start: null,
    session_id: null,
    worktree_path: null,
    branch: null,
    started_at: at,
    ended_at: null,
    last_heartbeat: null,
    config_hash: meta.config_hash,
    failure: null,
    tool_calls: 0,
    updated_at: at,
    summary: { type: meta.type, task: shortTask(meta.task), ...attemptSummary(meta) },
  };
}

function checkFailure(value: unknown): Failure | null {
  if (value === null || value === undefined) return null;
  const o = obj(value, '"failure"');
  const last = strOrNull(o, 'last_safe_artifact');
  return {
    kind: oneOf(o, 'kind', FAILURE_KINDS),
    message: str(o, 'message'),
    ...(o.last_safe_artifact === undefined ? {} : { last_safe_artifact: last }),
    ...(typeof o.next === 'string' ? { next: o.next } : {}),
  };
}

function checkCheckpoint(value: unknown): Checkpoint | null {
  if (value === null) return null;
  const o = obj(value, '"checkpoint"');
  return {
    commit: str(o, 'commit'),
    head: str(o, 'head'),
    at: str(o, 'at'),
    iteration: count(o, 'iteration'),
  };
}

/** Missing counts read as 0: a newer field never makes an older state unreadable. */
function checkSpend(value: unknown, what: string): Spend {
  const o = value === undefined ? {} : obj(value, what);
  const whole = (key: string) => (o[key] === undefined ? 0 : count(o, key));
  return {
    input_tokens: whole('input_tokens'),
    output_tokens: whole('output_tokens'),
    cache_read_input_tokens: whole('cache_read_input_tokens'),
    cache_creation_input_tokens: whole('cache_creation_input_tokens'),
    cost_usd: amount(o, 'cost_usd'),
    estimated: o.estimated === true,
    turns: whole('turns'),
    duration_ms: amount(o, 'duration_ms'),
    calls: whole('calls'),
  };
}

function checkUsage(value: unknown): RunUsage | null {
  if (value === null) return null;
  const o = obj(value, '"usage"');
  return {
    agent: checkSpend(o.agent, '"usage.agent"'),
    supervisor: checkSpend(o.supervisor, '"usage.supervisor"'),
  };
}

function checkSummary(value: unknown): NonNullable<RunState['summary']> {
  const o = obj(value, '"summary"');
  const ranOn = o.ran_on === undefined ? undefined : str(o, 'ran_on');
  const group = o.group === undefined ? undefined : checkAttemptOf(o.group);
  return {
    type: oneOf(o, 'type', RUN_TYPES),
    task: str(o, 'task'),
    ...(ranOn === undefined ? {} : { ran_on: ranOn }),
    ...(group === undefined ? {} : { group }),
  };
}

function checkAttemptOf(value: unknown): AttemptOf {
  const o = obj(value, '"summary.group"');
  return { id: str(o, 'id'), attempt: count(o, 'attempt'), attempts: count(o, 'attempts') };
}

/** An attempt of a group says so in its summary (from meta.yaml `options.group`, set by src/group/). */
function attemptSummary(meta: RunMeta): { group?: AttemptOf } {
  const g = meta.options?.group;
  if (!g || typeof g !== 'object') return {};
  const { id, attempt, attempts } = g as Record<string, unknown>;
  if (typeof id !== 'string' || typeof attempt !== 'number' || typeof attempts !== 'number') return {};
  return { group: { id, attempt, attempts } };
}

function checkOutput(value: unknown): RunOutput | null {
  if (value === null) return null;
  const o = obj(value, '"output"');
  const verified = o.verified;
  return {
    template: strOrNull(o, 'template'),
    applied: o.applied === true,
    violations: count(o, 'violations'),
    corrections: count(o, 'corrections'),
    verified: typeof verified === 'boolean' ? verified : null,
  };
}

function checkSetup(value: unknown): RunSetup | null {
  if (value === null) return null;
  const o = obj(value, '"setup"');
  return {
    command: str(o, 'command'),
    ok: o.ok === true,
    exit_code: intOrNull(o, 'exit_code'),
    timed_out: o.timed_out === true,
    duration_ms: amount(o, 'duration_ms'),
    log: str(o, 'log'),
  };
}

function checkPublication(value: unknown): RunPublication | null {
  if (value === null) return null;
  const o = obj(value, '"publication"');
  return {
    commit: str(o, 'commit'),
    author: str(o, 'author'),
    committer: str(o, 'committer'),
    fetched_at: str(o, 'fetched_at'),
    ...(o.claimed_status === undefined ? {} : { claimed_status: oneOf(o, 'claimed_status', RUN_STATUSES) }),
    ...(o.events_bytes === undefined ? {} : { events_bytes: count(o, 'events_bytes') }),
  };
}

function checkRevision(value: unknown): RunRevision | null {
  if (value === null) return null;
  const o = obj(value, '"revision"');
  return {
    number: count(o, 'number'),
    started_at: str(o, 'started_at'),
    from_commit: strOrNull(o, 'from_commit'),
    cost_before_usd: amount(o, 'cost_before_usd'),
  };
}

function checkStateV1(o: Readonly<Record<string, unknown>>): RunState {
  return {
    schema_version: 1,
    status: oneOf(o, 'status', RUN_STATUSES),
    pid: intOrNull(o, 'pid'),
    pid_start: strOrNull(o, 'pid_start'),
    claude_pid: intOrNull(o, 'claude_pid'),
    claude_pid_start: strOrNull(o, 'claude_pid_start'),
    session_id: strOrNull(o, 'session_id'),
    worktree_path: strOrNull(o, 'worktree_path'),
    branch: strOrNull(o, 'branch'),
    started_at: str(o, 'started_at'),
    ended_at: strOrNull(o, 'ended_at'),
    last_heartbeat: strOrNull(o, 'last_heartbeat'),
    config_hash: str(o, 'config_hash'),
    failure: checkFailure(o.failure),
    tool_calls: count(o, 'tool_calls'),
    updated_at: str(o, 'updated_at'),
    ...(o.usage === undefined ? {} : { usage: checkUsage(o.usage) }),
    ...(o.claude_version === undefined ? {} : { claude_version: strOrNull(o, 'claude_version') }),
    ...(o.model_used === undefined ? {} : { model_used: strOrNull(o, 'model_used') }),
    ...(o.summary === undefined ? {} : { summary: checkSummary(o.summary) }),
    ...(o.endpoint_url === undefined ? {} : { endpoint_url: strOrNull(o, 'endpoint_url') }),
    ...(o.socket_path === undefined ? {} : { socket_path: strOrNull(o, 'socket_path') }),
    ...(o.process_mark === undefined ? {} : { process_mark: strOrNull(o, 'process_mark') }),
    ...(o.launch_dir === undefined ? {} : { launch_dir: strOrNull(o, 'launch_dir') }),
    ...(o.checkpoint === undefined ? {} : { checkpoint: checkCheckpoint(o.checkpoint) }),
    ...(o.output === undefined ? {} : { output: checkOutput(o.output) }),
    ...(o.result_commit === undefined ? {} : { result_commit: strOrNull(o, 'result_commit') }),
    ...(o.setup === undefined ? {} : { setup: checkSetup(o.setup) }),
    ...(o.failed_tool_calls === undefined ? {} : { failed_tool_calls: count(o, 'failed_tool_calls') }),
    ...(o.last_tool_error === undefined ? {} : { last_tool_error: strOrNull(o, 'last_tool_error') }),
    ...(o.publication === undefined ? {} : { publication: checkPublication(o.publication) }),
    ...(o.revision === undefined ? {} : { revision: checkRevision(o.revision) }),
  };
}

/**
 * Parsed state.json of any known schema version → the current RunState. Older versions get a
 * step here (`if (version === 1) raw = v1ToV2(raw)` …) so every reader sees the newest shape;
 * the next write stores it. Unknown fields are dropped. Throws ShapeError.
 */
export function migrateState(raw: unknown): RunState {
  const o = obj(raw, 'state.json');
  schemaVersion(o, STATE_SCHEMA_VERSION);
  return checkStateV1(o);
}

export function parseState(text: string, file: string): RunState {
  try {
    return migrateState(JSON.parse(text));
  } catch (error) {
    throw corruptFile(file, error);
  }
}

export function serializeState(state: RunState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

/**
 * The state after `patch`, pure. `updated_at` is always `now`. When the status changes and the
 * patch says nothing about `ended_at`: leaving ACTIVE stamps it (once), returning to ACTIVE
 * (resume) clears it. Throws a plain Error for a patch that breaks the shape: that is a bug.
 */
export function applyStatePatch(state: RunState, patch: StatePatch, now: Date): RunState {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const next: Record<string, unknown> = {
    ...state,
    ...defined,
    schema_version: 1,
    updated_at: now.toISOString(),
  };
  if (patch.status !== undefined && patch.status !== state.status && patch.ended_at === undefined) {
    next.ended_at = patch.status === 'ACTIVE' ? null : (state.ended_at ?? now.toISOString());
  }
  // A status written here (a merge, a discard) is this machine's, no longer a publication's claim.
  if (patch.status !== undefined && state.publication?.claimed_status !== undefined && !patch.publication) {
    const { claimed_status: _claimed, ...publication } = state.publication;
    next.publication = publication;
  }
  try {
    return checkStateV1(next);
  } catch (error) {
    if (error instanceof ShapeError)
      throw new Error(`invalid state patch ${JSON.stringify(patch)}: ${error.message}`);
    throw error;
  }
}

/** The run's state, or null when there is none ("none" is a normal answer mid-creation). */
export function readState(runDir: string): RunState | null {
  const file = path.join(runDir, STATE_FILE);
  let text: string;
  try {
    text = readOwnFile(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw fsError(error, 'read', file);
  }
  return parseState(text, file);
}
