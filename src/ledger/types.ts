/**
 * The run ledger's on-disk shapes. Field names are snake_case because they are file formats that
 * people read and other tools parse; every file carries a schema_version.
 */

export const RUN_TYPES = ['scout', 'plan', 'fix', 'review', 'interactive'] as const;
export type RunType = (typeof RUN_TYPES)[number];

/**
 * ACTIVE: claude is (supposed to be) running. DONE: finished with nothing to review.
 * REVIEW: a fix finished with changes waiting for `agentbox merge`. CRASHED / STALLED / ABORTED:
 * ended badly (see `failure`). FAILED: could not start (the project's setup failed; claude never
 * ran, so there is nothing to resume). MERGED / DISCARDED: the human gate decided.
 */
export const RUN_STATUSES = [
  'ACTIVE',
  'DONE',
  'REVIEW',
  'CRASHED',
  'STALLED',
  'ABORTED',
  'FAILED',
  'MERGED',
  'DISCARDED',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const FAILURE_KINDS = [
  'timeout',
  'tool_error',
  'agent_abort',
  'api_error',
  'killed',
  'crashed',
  'stalled',
  'budget',
  'supervisor',
  'io_error',
  'violation',
  'setup',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What a run is allowed to do. Hashed into `config_hash`; resume refuses when it changed. */
export interface Envelope {
  readonly model: string | null;
  readonly tools_allowlist: readonly string[];
  readonly safe_commands: readonly string[];
  readonly human_only_commands: readonly string[];
  /** Extra envelope fields a run type adds (permission mode, deny rules…). Hashed too. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** meta.yaml: written once when the run is created, never rewritten. */
export interface RunMeta extends Envelope {
  readonly schema_version: 1;
  readonly run_name: string;
  /** Short id: the hash at the end of the run name; used in slash command names. */
  readonly run_id: string;
  readonly type: RunType;
  readonly task: string;
  readonly slug: string;
  readonly repo_root: string;
  readonly repo_sha_start: string | null;
  readonly created_at: string;
  readonly agentbox_version: string;
  readonly config_hash: string;
  /**
   * How the run was started (timeout, supervisor mode, budget…): recorded so that a detached
   * worker and `resume` run it the same way. Owned by src/run/; not part of config_hash.
   */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Set on a run brought in by `agentbox fetch`: it ran on another machine (see src/remote/). */
  readonly origin?: RunOrigin;
  /** Set on a run `agentbox rerun` started: the name of the run whose task it took (src/run/rerun.ts). */
  readonly rerun_of?: string;
}

/** meta.yaml `origin`: where a fetched run ran, and under which name it was published there. */
export interface RunOrigin {
  /** The git remote it was fetched from (its name in this clone). */
  readonly remote: string;
  /** The machine that published it, as it said (untrusted: for display only). */
  readonly host: string;
  /** Its name there: differs from run_name when that name was taken here. */
  readonly run: string;
}

export interface Failure {
  readonly kind: FailureKind;
  readonly message: string;
  readonly last_safe_artifact?: string | null;
  /** What to do next when this failure knows better than its kind (a setup the proxy refused). */
  readonly next?: string;
}

/**
 * A snapshot of a fix run's worktree, taken when a turn ends (at the Stop hook): `commit` holds
 * every file, untracked ones included, on top of `head`, the branch's commit at that moment. It is
 * kept alive by the ref refs/agentbox/checkpoints/<run>.
 */
export interface Checkpoint {
  readonly commit: string;
  readonly head: string;
  readonly at: string;
  readonly iteration: number;
}

/**
 * What one side of a run spent: the agent (its claude, over every resume) or the supervisor (its
 * own `claude -p` calls). Figures are Claude Code's own where a result line stated them.
 */
export interface Spend {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cost_usd: number;
  /** Part of it is agentbox's estimate (calls no result line has stated yet; see src/budget/). */
  readonly estimated: boolean;
  /** Model round trips. */
  readonly turns: number;
  readonly duration_ms: number;
  /** claude processes: the agent's start and resumes; the supervisor's calls. */
  readonly calls: number;
}

/** state.json `usage`. */
export interface RunUsage {
  readonly agent: Spend;
  readonly supervisor: Spend;
}

/** state.json: the mutable truth about a run, always replaced atomically. */
export interface RunState {
  readonly schema_version: 1;
  readonly status: RunStatus;
  /** The supervising agentbox process. */
  readonly pid: number | null;
  /** Start time of `pid` (ticks since boot from /proc, or null): a pid alone can be reused. */
  readonly pid_start: string | null;
  readonly claude_pid: number | null;
  readonly claude_pid_start: string | null;
  readonly session_id: string | null;
  readonly worktree_path: string | null;
  readonly branch: string | null;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly last_heartbeat: string | null;
  readonly config_hash: string;
  readonly failure: Failure | null;
  readonly tool_calls: number;
  readonly updated_at: string;
  /** Tokens and cost so far (the budget counts both sides); absent until claude reports any. */
  readonly usage?: RunUsage | null;
  /** From claude's `system/init` line: its version and the model it actually runs (meta.yaml has the one asked for). */
  readonly claude_version?: string | null;
  readonly model_used?: string | null;
  /** The run's hook endpoint while it runs (loopback; useless without the secret, which is never stored). */
  readonly endpoint_url?: string | null;
  /** An interactive session's control socket (agentbox inject/restart/stop/state talk to it). */
  readonly socket_path?: string | null;
  /**
   * The marker in the environment of every process claude starts (AGENTBOX_PROCESS_MARK): the
   * watchdog ends an orphaned claude's descendants by it, also those that left its process group.
   */
  readonly process_mark?: string | null;
  /** Where claude was started, and so where the run's slash commands are (`.claude/commands/run_<id>`). */
  readonly launch_dir?: string | null;
  /** A fix run's last consistent point: its worktree at the end of the last finished turn. */
  readonly checkpoint?: Checkpoint | null;
  /**
   * meta.yaml's type and task (one line, at most 200 characters), copied at creation so that
   * `agentbox status` reads only JSON: loading the YAML parser alone costs ~20 ms of its 150 ms.
   * Optional: a state without it falls back to reading meta.yaml.
   */
  readonly summary?: {
    readonly type: RunType;
    readonly task: string;
    /** A fetched run: the machine it ran on, as its publication said (untrusted; for display). */
    readonly ran_on?: string;
    /** An attempt of a group (`fix --attempts N`, src/group/): `agentbox status` shows the group's one row. */
    readonly group?: AttemptOf;
  };
  /** How the run's final answer fared against its output contract and verification (set at its end). */
  readonly output?: RunOutput | null;
  /** A fix run's result as a commit on its branch (`agentbox/<run>`): the start commit + changes.patch. */
  readonly result_commit?: string | null;
  /** `runs.setup` in the run's worktree: the last attempt (set when it ends). */
  readonly setup?: RunSetup | null;
  /** Tool calls whose result was an error (refused ones are counted apart, as refusals). */
  readonly failed_tool_calls?: number;
  /** The last of them in one line: tool, target, the error's telling line. */
  readonly last_tool_error?: string | null;
  /**
   * A fetched run (src/remote/): the publication this state came from and who made it, as git's
   * commit says. Written by `agentbox fetch` alone, never taken from the publication: it is what
   * makes the rest of this state a claim (status, verification, cost), not a fact checked here.
   */
  readonly publication?: RunPublication | null;
  /** A fix run revised after review (`agentbox revise`): the revision it is on. Absent: revision 1. */
  readonly revision?: RunRevision | null;
}

/**
 * state.json `revision`: the revision a fix run is on (1 is the run as it first ran; each
 * `agentbox revise` adds one) and what its record in `revisions/<number>/` is measured from.
 */
export interface RunRevision {
  readonly number: number;
  readonly started_at: string;
  /** The result commit the revision started from (the previous revision's); null: none was made. */
  readonly from_commit: string | null;
  /** The run's cost (USD, agent and supervisor) when the revision started: its own is the rest. */
  readonly cost_before_usd: number;
}

/** state.json `publication`: the commit a fetched run's files came from. */
export interface RunPublication {
  readonly commit: string;
  /** The commit's author, `Name <email>` (git's, unauthenticated: what the pusher's git said). */
  readonly author: string;
  /** Its committer, the same way. */
  readonly committer: string;
  readonly fetched_at: string;
  /**
   * The status the publication claimed: a MERGED or DISCARDED status that is still this one was
   * said by the publication, not decided here (src/remote/import.ts keeps only a decision here).
   */
  readonly claimed_status?: RunStatus;
  /**
   * How many bytes of the run's events.jsonl are the publication's: the lines after them are this
   * machine's own (a refused merge, a refused rerun), kept when a later publication replaces the rest.
   */
  readonly events_bytes?: number;
}

/** state.json `setup`: how the project's setup command went. */
export interface RunSetup {
  readonly command: string;
  readonly ok: boolean;
  /** null: it was killed (timeout, stopped) or could not start. */
  readonly exit_code: number | null;
  readonly timed_out: boolean;
  readonly duration_ms: number;
  /** Its whole output, relative to the run folder. */
  readonly log: string;
}

/** state.json `output`: the output contract's verdict over a run. */
export interface RunOutput {
  /** The run's copy of its output template, relative to the run folder; null: none (raw answer). */
  readonly template: string | null;
  /** report.md is the answer formatted by the template. */
  readonly applied: boolean;
  readonly violations: number;
  readonly corrections: number;
  /** runs.verify's last outcome; null: not run. */
  readonly verified: boolean | null;
}

/** One line of INDEX.jsonl. Every line is a whole snapshot of what the dashboard shows. */
export interface IndexEvent {
  readonly v: 1;
  readonly ts: string;
  readonly run: string;
  readonly event: string;
  readonly type: RunType;
  readonly status: RunStatus;
  readonly task: string;
  readonly detail?: string;
  /** Copied from state.json so that folding INDEX.jsonl alone answers `agentbox status --all`. */
  readonly started_at?: string;
  readonly ended_at?: string | null;
  readonly failure_kind?: FailureKind | null;
  /** Tool calls so far (a run's last event has its total). */
  readonly tool_calls?: number;
  /** The run's cost in USD so far (agent and supervisor), for `status --all`. */
  readonly cost_usd?: number | null;
  /** A fetched run: the machine it ran on (meta.yaml origin.host), for `status --all`. */
  readonly ran_on?: string;
  /** A fetched run: who published what its status and cost claim (state.json `publication`). */
  readonly claimed_by?: string;
  /** A fetched run whose status is its publication's claim (src/ledger/claim.ts statusClaimed). */
  readonly status_claimed?: true;
  /** An attempt of a group: the group's id and the attempt's number, so `status --all` folds the group. */
  readonly group?: string;
  readonly attempt?: number;
  /** An attempt's runs.verify outcome (null: not run), so `status` counts the group's passes from the log. */
  readonly verified?: boolean | null;
  /** A revised fix run (agentbox revise): its revision, so `status --all` shows it from the log. */
  readonly revision?: number;
}

/** An attempt's place in its group (meta.yaml `options.group` has the group's name as well). */
export interface AttemptOf {
  readonly id: string;
  readonly attempt: number;
  readonly attempts: number;
}
