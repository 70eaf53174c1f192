/**
 * A group: N fix runs ("attempts") of one task, side by side (`agentbox fix --attempts N`). Each
 * attempt is a whole run of its own in runs/; the group's folder, `.agents/groups/<name>/`, holds
 * what joins them: group.json (written once), state.json (replaced atomically), report.md (the
 * ranking) and patches/agent_<k>.patch (every attempt's patch, kept after the merge).
 */

import type { RunOrigin } from '../ledger/types.js';

export const GROUP_FILE = 'group.json';
export const GROUP_STATE_FILE = 'state.json';
export const PATCHES_DIR = 'patches';

/** group.json: how the group was asked for. Never rewritten. */
export interface GroupMeta {
  readonly schema_version: 1;
  readonly group_name: string;
  /** 6 hex, unique across runs and groups: `agentbox show <id>` names the group. */
  readonly group_id: string;
  readonly type: 'fix';
  readonly task: string;
  readonly attempts: number;
  /** `--models a,b`: attempt k runs models[(k-1) % length]; null: every attempt the run's default. */
  readonly models: readonly string[] | null;
  /** Attempts running at once; the rest wait their turn. */
  readonly max_parallel: number;
  /** `--first-pass`: once an attempt passes runs.verify, the others are stopped. */
  readonly first_pass: boolean;
  /** The whole group's budget in USD (every attempt, agent and supervisor); null: none. */
  readonly max_cost_usd: number | null;
  readonly repo_root: string;
  readonly repo_sha_start: string;
  readonly created_at: string;
  readonly agentbox_version: string;
  /** A fetched group (src/remote/): where it ran, and its name there. Absent for a group made here. */
  readonly origin?: RunOrigin;
  /** How each attempt is started (timeout, supervisor, iterations, the --model given): a waiting
   * attempt is created later, maybe by a detached worker, exactly as the first ones were. */
  readonly run_options: {
    readonly timeout_ms: number;
    readonly supervisor: string;
    readonly max_iterations: number;
    readonly model: string | null;
  };
}

/** One attempt: its run once it has started (null while it waits its turn). */
export interface GroupMember {
  /** 1-based. */
  readonly attempt: number;
  readonly run: string | null;
  /** The model asked for (null: the configured default). */
  readonly model: string | null;
  /** Why the attempt could not be started (its worktree, its run folder); it is not tried again. */
  readonly error?: string;
}

/**
 * ACTIVE: the group's process schedules its attempts. ENDED: every attempt that was to start has
 * ended (or the group was halted). MERGED / DISCARDED: the human gate decided for the whole group.
 */
export const GROUP_STATUSES = ['ACTIVE', 'ENDED', 'MERGED', 'DISCARDED'] as const;
export type GroupStatus = (typeof GROUP_STATUSES)[number];

/** Why attempts that were still waiting will not start, and running ones were stopped. */
export interface GroupHalt {
  readonly reason: 'first_pass' | 'budget' | 'stopped';
  readonly detail: string;
  readonly at: string;
}

/** state.json of a group. */
export interface GroupState {
  readonly schema_version: 1;
  readonly status: GroupStatus;
  /** The process that schedules the attempts (every attempt's state.json names it too). */
  readonly pid: number | null;
  readonly pid_start: string | null;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly updated_at: string;
  /** One per attempt, in order, from the start (run: null until it starts). */
  readonly members: readonly GroupMember[];
  readonly halted: GroupHalt | null;
  /**
   * Its process died while it was ACTIVE (the watchdog found it gone): the status is ENDED, and the
   * group shows as CRASHED until `agentbox recover` takes it up. Absent in groups that never crashed.
   */
  readonly crashed?: { readonly detail: string; readonly at: string } | null;
  /** The attempt `agentbox merge` took. */
  readonly merged: { readonly attempt: number; readonly run: string; readonly at: string } | null;
  /**
   * A fetched group: the status its publication claimed (src/remote/imported-group.ts). A MERGED
   * or DISCARDED that is still this one was said there, not decided here.
   */
  readonly claimed_status?: GroupStatus;
}

export type { AttemptOf } from '../ledger/types.js';
