import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { CLAIM_ATTEMPTS, randomRunId } from '../ledger/create.js';
import { formatRunName, isRunName, runIdOf, slugify } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { ownerPid } from '../process/owner.js';
import { processStartTime } from '../process/reap.js';
import { writeAtomic } from '../util/fs.js';
import { VERSION } from '../version.js';
import { checkGroupMeta, checkGroupState } from './check.js';
import { GROUP_FILE, GROUP_STATE_FILE, type GroupMeta, type GroupState } from './types.js';

/** A group as it is on disk. */
export interface GroupDetails {
  readonly name: string;
  readonly dir: string;
  readonly meta: GroupMeta;
  readonly state: GroupState;
}

export const groupsDir = (ledger: Ledger): string => path.join(ledger.dir, 'groups');
export const groupDir = (ledger: Ledger, name: string): string => path.join(groupsDir(ledger), name);

/** The group folders, oldest first (names start with their time). */
export function listGroupNames(ledger: Ledger): string[] {
  try {
    return fs.readdirSync(groupsDir(ledger)).filter(isRunName).sort();
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw fsError(error, 'read', groupsDir(ledger));
  }
}

/**
 * Claims `groups/<name>` for an id no run and no group has: a short id names one thing in the
 * ledger, so `agentbox show <id>` never has to guess (the same two-step claim as a run's).
 */
function claimGroupFolder(ledger: Ledger, now: Date, slug: string, nextId: () => string): string {
  fs.mkdirSync(groupsDir(ledger), { recursive: true });
  for (let i = 0; i < CLAIM_ATTEMPTS; i++) {
    const id = nextId();
    const name = formatRunName(now, slug, id);
    const dir = groupDir(ledger, name);
    try {
      fs.mkdirSync(dir);
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') continue;
      throw fsError(error, 'create the group folder', dir);
    }
    const taken = (d: string) =>
      fs.readdirSync(d).some((other) => other !== name && other.endsWith(`__${id}`));
    if (taken(groupsDir(ledger)) || taken(ledger.runsDir)) {
      fs.rmdirSync(dir);
      continue;
    }
    return name;
  }
  throw new AgentboxError('IO_FAILED', `could not claim a free group name in ${groupsDir(ledger)}`, {
    hint: 'run the command again',
  });
}

export interface CreateGroupInput {
  readonly task: string;
  readonly attempts: number;
  readonly models: readonly string[] | null;
  readonly maxParallel: number;
  readonly firstPass: boolean;
  readonly maxCostUsd: number | null;
  readonly repoShaStart: string;
  readonly runOptions: GroupMeta['run_options'];
  readonly now?: Date;
  /** Source of short ids; tests pass a small pool to force collisions. Default: crypto random. */
  readonly randomId?: () => string;
}

/** The model attempt `k` (1-based) asks for. Pure. */
export function attemptModel(models: readonly string[] | null, k: number): string | null {
  return models && models.length > 0 ? models[(k - 1) % models.length]! : null;
}

/** Creates a group's folder with group.json and its first state (ACTIVE, every attempt waiting). */
export async function createGroup(ledger: Ledger, input: CreateGroupInput): Promise<GroupDetails> {
  const now = input.now ?? new Date();
  const name = claimGroupFolder(ledger, now, slugify(input.task, 'fix'), input.randomId ?? randomRunId);
  const dir = groupDir(ledger, name);
  const meta: GroupMeta = {
    schema_version: 1,
    group_name: name,
    group_id: runIdOf(name),
    type: 'fix',
    task: input.task,
    attempts: input.attempts,
    models: input.models,
    max_parallel: input.maxParallel,
    first_pass: input.firstPass,
    max_cost_usd: input.maxCostUsd,
    repo_root: ledger.root,
    repo_sha_start: input.repoShaStart,
    created_at: now.toISOString(),
    agentbox_version: VERSION,
    run_options: input.runOptions,
  };
  const at = now.toISOString();
  const state: GroupState = {
    schema_version: 1,
    status: 'ACTIVE',
    pid: ownerPid(),
    pid_start: processStartTime(ownerPid()),
    started_at: at,
    ended_at: null,
    updated_at: at,
    members: Array.from({ length: input.attempts }, (_, i) => ({
      attempt: i + 1,
      run: null,
      model: attemptModel(input.models, i + 1),
    })),
    halted: null,
    merged: null,
  };
  await writeAtomic(path.join(dir, GROUP_FILE), `${JSON.stringify(meta, null, 2)}\n`);
  await writeAtomic(path.join(dir, GROUP_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  return { name, dir, meta, state };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw new AgentboxError('RUN_CORRUPT', `cannot read ${file}: ${(error as Error).message}`, {
      hint: 'restore the file from a backup, or remove the group folder',
    });
  }
}

/** A group by its folder name; RUN_NOT_FOUND when it has no group.json. */
export function readGroup(ledger: Ledger, name: string): GroupDetails {
  const dir = groupDir(ledger, name);
  const rawMeta = readJson(path.join(dir, GROUP_FILE));
  const rawState = readJson(path.join(dir, GROUP_STATE_FILE));
  if (rawMeta === undefined || rawState === undefined) {
    throw new AgentboxError(
      'RUN_NOT_FOUND',
      `group ${name} has no ${rawMeta === undefined ? GROUP_FILE : GROUP_STATE_FILE}`,
      {
        hint: 'run "agentbox status" to list runs and groups',
      },
    );
  }
  return {
    name,
    dir,
    meta: checkGroupMeta(rawMeta, path.join(dir, GROUP_FILE)),
    state: checkGroupState(rawState, path.join(dir, GROUP_STATE_FILE)),
  };
}

const queues = new Map<string, Promise<unknown>>();

/**
 * Replaces a group's state.json with what `change` makes of it, atomically. NOTE: updates from
 * this process are queued; a group has one writer at a time (its process while ACTIVE, then the
 * gate), as a run has.
 */
export function updateGroupState(
  ledger: Ledger,
  name: string,
  change: (current: GroupState) => Partial<Omit<GroupState, 'schema_version'>> | null,
): Promise<GroupState> {
  const dir = groupDir(ledger, name);
  const task = async () => {
    const current = readGroup(ledger, name).state;
    const patch = change(current);
    if (patch === null) return current;
    const next: GroupState = { ...current, ...patch, updated_at: new Date().toISOString() };
    await writeAtomic(path.join(dir, GROUP_STATE_FILE), `${JSON.stringify(next, null, 2)}\n`);
    return next;
  };
  const next = (queues.get(dir) ?? Promise.resolve()).catch(() => undefined).then(task);
  queues.set(dir, next);
  const forget = () => {
    if (queues.get(dir) === next) queues.delete(dir);
  };
  next.then(forget, forget);
  return next;
}
