// NOTE: a namespace import, not `{ z }`: that named zod's namespace object, so the bundle kept all of
// it, ~50 locales included (757 KB compiled by every command that reads the config; now 182 KB).
import * as z from 'zod';
import { MIN_STALL_MS, parseDuration } from './duration.js';

// Each schema here checks a file or two per command: zod's compiled fast path (code generated with
// `new Function` at a schema's first parse) costs more than it saves, ~4 ms of reading the
// configuration. Global to zod, and the same wherever it is set.
z.config({ jitless: true });

// Every duration here is a time something may take: none is 0 (a 0s timeout was taken here and
// then refused at the run's start, without the file's name).
const duration = z.string().refine((v) => (parseDuration(v) ?? 0) > 0, {
  message: 'must be a duration longer than 0, such as "90s", "30m" or "2h"',
});
const names = z.array(z.string().min(1));

/**
 * An empty section (every key under it deleted or commented out) reads as null: like no section.
 * Keys are nullable for the same reason: an empty key means "not set in this file".
 */
const section = <T extends z.ZodRawShape>(shape: T) => z.object(shape).strict().nullable().optional();

/**
 * The configuration file format (user-level and project-level files have the same shape; every
 * key is optional in a file). Unknown keys are errors so a typo never silently does nothing.
 */
export const fileSchema = z
  .object({
    claude: section({
      bin: z.string().min(1).nullable().optional(),
      model: z.string().min(1).nullable().optional(),
    }),
    supervisor: section({
      mode: z.enum(['claude', 'rules', 'off']).nullable().optional(),
      max_iterations: z.number().int().min(1).nullable().optional(),
      max_cost: z.number().positive().nullable().optional(),
      timeout: duration.nullable().optional(),
      bin: z.string().min(1).nullable().optional(),
      model: z.string().min(1).nullable().optional(),
      enabled: z.boolean().nullable().optional(),
      timeout_profile: z.enum(['standard', 'long', 'extended']).nullable().optional(),
      max_corrections: z.number().int().min(0).nullable().optional(),
      fail_on_violation: z.boolean().nullable().optional(),
      require_format_validation: z.boolean().nullable().optional(),
      allow_raw_output: z.boolean().nullable().optional(),
    }),
    interactive: section({
      cwd: z.string().min(1).nullable().optional(),
      restart_delay: duration.nullable().optional(),
      flapping_delay: duration.nullable().optional(),
      flap_window: duration.nullable().optional(),
      flap_threshold: z.number().int().min(1).nullable().optional(),
      halt_after: z.number().int().min(1).nullable().optional(),
    }),
    runs: section({
      timeout: duration.nullable().optional(),
      stall_after: duration
        .refine((v) => (parseDuration(v) ?? 0) >= MIN_STALL_MS, {
          message:
            'must be at least 1m: the watchdog never calls a run STALLED whose supervisor reported within the last 60 s (it reports every 15 s)',
        })
        .nullable()
        .optional(),
      worktree_dir: z.string().min(1).nullable().optional(),
      env_pass: names.nullable().optional(),
      fix_allowed_tools: names.nullable().optional(),
      verify: z.string().min(1).nullable().optional(),
      verify_timeout: duration.nullable().optional(),
      setup: z.string().min(1).nullable().optional(),
      setup_timeout: duration.nullable().optional(),
      setup_domains: names.nullable().optional(),
      restart_mode: z.enum(['auto', 'ask', 'off']).nullable().optional(),
      notify: z.string().min(1).nullable().optional(),
      notify_timeout: duration.nullable().optional(),
      notify_bell: z.boolean().nullable().optional(),
      max_parallel: z.number().int().min(1).max(16).nullable().optional(),
    }),
    sandbox: section({
      mode: z.enum(['required', 'off']).nullable().optional(),
      allowed_domains: names.nullable().optional(),
      deny_read: names.nullable().optional(),
      allow_read: names.nullable().optional(),
    }),
  })
  .strict();

export type ConfigFile = z.infer<typeof fileSchema>;

/** supervisor.timeout_profile: a documented runs.timeout each (the seed's timeout profiles). */
export const TIMEOUT_PROFILES = { standard: '30m', long: '2h', extended: '6h' } as const;
export type TimeoutProfile = keyof typeof TIMEOUT_PROFILES;

/** The run timeout in effect: runs.timeout when set, else the profile's. */
export const runTimeout = (config: Config): string =>
  config.runs.timeout ?? TIMEOUT_PROFILES[config.supervisor.timeout_profile];

/** The effective configuration: defaults, then the user file, then the project file. */
export interface Config {
  readonly claude: {
    /** Binary to run; null means "claude on PATH". AGENTBOX_CLAUDE_BIN beats it. */
    readonly bin: string | null;
    readonly model: string | null;
  };
  readonly supervisor: {
    /** claude: rules, then a fresh `claude -p` per Stop; rules: rules only; off: no decisions. */
    readonly mode: 'claude' | 'rules' | 'off';
    /** Stops per run; the Stop that reaches it ends the run. */
    readonly max_iterations: number;
    /** USD a run may cost (agent and supervisor); a run that passes it is ended. null: no budget. */
    readonly max_cost: number | null;
    /** Each supervisor `claude -p` is given up after this long (then the rules decide). */
    readonly timeout: string;
    /** The binary the supervisor runs; null: the same Claude Code as the runs. */
    readonly bin: string | null;
    /** The supervisor's model; null: claude.model. */
    readonly model: string | null;
    /**
     * The output contract and verification are enforced (corrected, or the run fails). false: they
     * are still checked and logged, never enforced.
     */
    readonly enabled: boolean;
    /** A run's timeout when runs.timeout is not set: standard 30m, long 2h, extended 6h. */
    readonly timeout_profile: TimeoutProfile;
    /** Corrections the supervisor asks for (a violation at a Stop) before the run fails. */
    readonly max_corrections: number;
    /** Every violation is major: the run fails at the first one, no correction. */
    readonly fail_on_violation: boolean;
    /** Check the final answer against the output template (missing_section, bad_format). */
    readonly require_format_validation: boolean;
    /** No output template anywhere: the raw answer is the report (true), or the built-in template applies. */
    readonly allow_raw_output: boolean;
  };
  readonly interactive: {
    /** Where `agentbox start` runs claude (relative to the repository root); null: the root. */
    readonly cwd: string | null;
    /** After a crash: wait this long, then restart resuming the session. */
    readonly restart_delay: string;
    /** After a crash that is the flap_threshold-th within flap_window: wait this long instead. */
    readonly flapping_delay: string;
    readonly flap_window: string;
    readonly flap_threshold: number;
    /** Consecutive crashes after which the session is not restarted again. */
    readonly halt_after: number;
  };
  readonly runs: {
    /** A run still going after this long is stopped (failure kind "timeout"); null: supervisor.timeout_profile. */
    readonly timeout: string | null;
    /** A running run whose supervisor has not reported (heartbeat) for this long is marked STALLED. */
    readonly stall_after: string;
    /**
     * Where fix runs get their worktrees; relative paths are relative to the repository root. null:
     * outside the repository, under $XDG_DATA_HOME (or ~/.local/share)/agentbox/worktrees, so that one
     * deny rule can keep the agent out of the whole main working tree.
     */
    readonly worktree_dir: string | null;
    /** Extra environment variable names passed to the agent (the rest is a whitelist). */
    readonly env_pass: readonly string[];
    /** Tools a fix run may use without asking, besides edits inside its worktree. */
    readonly fix_allowed_tools: readonly string[];
    /**
     * The project's verification command (`npm test`), run by agentbox in a fix run's worktree,
     * in the run's sandbox, after the agent's last stop and before the run can reach REVIEW.
     */
    readonly verify: string | null;
    /** The verification is stopped (and fails) after this long. */
    readonly verify_timeout: string;
    /**
     * The project's setup command (`npm ci`), run by agentbox in a fix run's new worktree, in the
     * run's sandbox, before claude starts; a failure ends the run (FAILED, kind "setup").
     */
    readonly setup: string | null;
    /** The setup is stopped (and fails) after this long. */
    readonly setup_timeout: string;
    /** Hosts the setup command may reach besides sandbox.allowed_domains (the agent may not). */
    readonly setup_domains: readonly string[];
    /**
     * What `agentbox ui` does with runs that were interrupted (agentbox or the machine went down):
     * auto: `agentbox recover` at once; ask: the page offers it; off: nothing.
     */
    readonly restart_mode: 'auto' | 'ask' | 'off';
    /** A shell command told when a run ends or a session waits: the outcome as JSON on its stdin. */
    readonly notify: string | null;
    /** The notify command is killed after this long. */
    readonly notify_timeout: string;
    /** Ring the terminal that started the run (BEL; OSC 9 where the terminal shows it). */
    readonly notify_bell: boolean;
    /** `fix --attempts N`: how many attempts run at once; the rest wait their turn (--max-parallel). */
    readonly max_parallel: number;
  };
  readonly sandbox: {
    /**
     * required: a fix run's shell commands run in Claude Code's sandbox, and a fix run refuses to
     * start where it cannot work. off: the explicit opt-out, for a machine or container that is
     * itself the sandbox.
     */
    readonly mode: 'required' | 'off';
    /** Hosts a run's shell commands may reach (through the sandbox's proxy); none by default. */
    readonly allowed_domains: readonly string[];
    /** More paths the agent's shell may not read (~ is the home folder), besides the built-in list. */
    readonly deny_read: readonly string[];
    /**
     * More paths the agent's shell may read (~ is the home folder), besides the built-in allowlist
     * (src/sandbox/read-allowlist.ts): reads are denied by default. A repository setting it needs trust.
     */
    readonly allow_read: readonly string[];
  };
}

export const DEFAULT_CONFIG: Config = {
  claude: { bin: null, model: null },
  supervisor: {
    mode: 'rules',
    max_iterations: 50,
    max_cost: null,
    timeout: '30s',
    bin: null,
    model: null,
    enabled: true,
    timeout_profile: 'standard',
    max_corrections: 2,
    fail_on_violation: false,
    require_format_validation: true,
    allow_raw_output: true,
  },
  interactive: {
    cwd: null,
    restart_delay: '2s',
    flapping_delay: '30s',
    flap_window: '60s',
    flap_threshold: 3,
    halt_after: 5,
  },
  runs: {
    timeout: null,
    stall_after: '5m',
    worktree_dir: null,
    env_pass: [],
    fix_allowed_tools: ['Bash'],
    verify: null,
    verify_timeout: '10m',
    setup: null,
    setup_timeout: '10m',
    setup_domains: [],
    restart_mode: 'ask',
    notify: null,
    notify_timeout: '10s',
    notify_bell: true,
    max_parallel: 4,
  },
  sandbox: { mode: 'required', allowed_domains: [], deny_read: [], allow_read: [] },
};

/** Every key a file may contain, as dotted paths, for "did you mean" suggestions. */
export const KNOWN_KEYS: readonly string[] = Object.entries(DEFAULT_CONFIG).flatMap(([sectionName, keys]) => [
  sectionName,
  ...Object.keys(keys).map((key) => `${sectionName}.${key}`),
]);
