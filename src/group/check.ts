import { AgentboxError } from '../errors.js';
import { isObj } from '../ledger/check.js';
import type { RunOrigin } from '../ledger/types.js';
import {
  GROUP_STATUSES,
  type GroupMember,
  type GroupMeta,
  type GroupState,
  type GroupStatus,
} from './types.js';

// A group's files are read back as untrusted JSON (a hand edit, a fetched group): every field is
// checked for its type before anything uses it.

function corrupt(file: string, why: string): AgentboxError {
  return new AgentboxError('RUN_CORRUPT', `${file} is not a valid group file: ${why}`, {
    hint: 'restore the file from a backup, or remove the group folder',
  });
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const strOrNull = (v: unknown): v is string | null => v === null || isStr(v);

export function checkGroupMeta(raw: unknown, file: string): GroupMeta {
  if (!isObj(raw) || raw.schema_version !== 1) throw corrupt(file, 'no schema_version 1');
  for (const key of ['group_name', 'group_id', 'task', 'repo_root', 'repo_sha_start', 'created_at'])
    if (!isStr(raw[key])) throw corrupt(file, `"${key}" is not text`);
  if (!isCount(raw.attempts) || !isCount(raw.max_parallel))
    throw corrupt(file, '"attempts" or "max_parallel" is not a count');
  if (raw.models !== null && !(Array.isArray(raw.models) && raw.models.every(isStr)))
    throw corrupt(file, '"models" is not a list of names');
  if (raw.max_cost_usd !== null && typeof raw.max_cost_usd !== 'number')
    throw corrupt(file, '"max_cost_usd" is not a number');
  const { origin: rawOrigin, ...rest } = raw;
  const origin = checkOrigin(rawOrigin, file);
  const o = isObj(raw.run_options) ? raw.run_options : {};
  return {
    ...(rest as unknown as GroupMeta),
    type: 'fix',
    first_pass: raw.first_pass === true,
    run_options: {
      timeout_ms: typeof o.timeout_ms === 'number' && o.timeout_ms > 0 ? o.timeout_ms : 30 * 60_000,
      supervisor: isStr(o.supervisor) ? o.supervisor : 'rules',
      max_iterations: isCount(o.max_iterations) ? o.max_iterations : 50,
      model: isStr(o.model) ? o.model : null,
    },
    ...(origin === undefined ? {} : { origin }),
  };
}

/** A fetched group's `origin` (src/remote/), or undefined for a group made here. */
function checkOrigin(raw: unknown, file: string): RunOrigin | undefined {
  if (raw === undefined) return undefined;
  if (!isObj(raw) || !isStr(raw.remote) || !isStr(raw.host) || !isStr(raw.run))
    throw corrupt(file, '"origin" is not { remote, host, run }');
  return { remote: raw.remote, host: raw.host, run: raw.run };
}

function checkMember(raw: unknown, file: string): GroupMember {
  if (!isObj(raw) || !isCount(raw.attempt) || !strOrNull(raw.run) || !strOrNull(raw.model))
    throw corrupt(file, 'a member is not { attempt, run, model }');
  return {
    attempt: raw.attempt,
    run: raw.run,
    model: raw.model,
    ...(isStr(raw.error) ? { error: raw.error.slice(0, 500) } : {}),
  };
}

export function checkGroupState(raw: unknown, file: string): GroupState {
  if (!isObj(raw) || raw.schema_version !== 1) throw corrupt(file, 'no schema_version 1');
  if (!GROUP_STATUSES.includes(raw.status as never))
    throw corrupt(file, `unknown status ${JSON.stringify(raw.status)}`);
  if (!Array.isArray(raw.members)) throw corrupt(file, '"members" is not a list');
  const halted =
    isObj(raw.halted) && isStr(raw.halted.reason) ? (raw.halted as unknown as GroupState['halted']) : null;
  const merged =
    isObj(raw.merged) && isCount(raw.merged.attempt) && isStr(raw.merged.run)
      ? (raw.merged as unknown as GroupState['merged'])
      : null;
  return {
    schema_version: 1,
    status: raw.status as GroupState['status'],
    pid: typeof raw.pid === 'number' ? raw.pid : null,
    pid_start: isStr(raw.pid_start) ? raw.pid_start : null,
    started_at: isStr(raw.started_at) ? raw.started_at : '',
    ended_at: isStr(raw.ended_at) ? raw.ended_at : null,
    updated_at: isStr(raw.updated_at) ? raw.updated_at : '',
    members: raw.members.map((m) => checkMember(m, file)),
    halted,
    ...(isObj(raw.crashed) && isStr(raw.crashed.detail) && isStr(raw.crashed.at)
      ? { crashed: { detail: raw.crashed.detail.slice(0, 500), at: raw.crashed.at } }
      : {}),
    merged,
    ...(GROUP_STATUSES.includes(raw.claimed_status as never)
      ? { claimed_status: raw.claimed_status as GroupStatus }
      : {}),
  };
}
