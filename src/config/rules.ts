import { parseDuration } from './duration.js';
import { type Config, runTimeout } from './schema.js';

/**
 * How a repository's agentbox.yaml meets the person's own setting of one key (their user file over
 * the defaults: where the person set nothing, the default is their setting). A repository may
 * tighten what the person set unasked; a value that would loosen it is a trust key (listed by
 * `agentbox trust`, unused until trusted). Once trusted, the repository's value is used as written,
 * but a denial is never taken back.
 */
export type Rule =
  /** Denials: the person's and the repository's together, always; nothing to trust. */
  | { readonly kind: 'union'; readonly why: string }
  /** An allowance: a list holding anything the person's does not is a trust key; a narrower one applies. */
  | { readonly kind: 'allow'; readonly why: string }
  /** A limit, lower is stricter: a value no higher than the person's applies; a higher one is a trust key. */
  | {
      readonly kind: 'limit';
      /** The value as a number to compare (a duration in ms; "none" as Infinity). */
      readonly measure: (value: unknown, config: Config) => number;
      readonly why: string;
    }
  /** A choice among values, strictest first: a later one than the person's is a trust key. */
  | { readonly kind: 'order'; readonly strictest: readonly string[]; readonly why: string }
  /** A command agentbox runs or a place it uses: any value but the person's is a trust key. */
  | { readonly kind: 'trust'; readonly why: string }
  /** Changes nothing a run may read, write, run, reach or spend: the repository's value applies. */
  | { readonly kind: 'free'; readonly why: string }
  /** The person's own file only: a repository's value is never used, trusted or not. */
  | { readonly kind: 'yours'; readonly why: string };

export type Rules = { readonly [S in keyof Config]: { readonly [K in keyof Config[S]]: Rule } };

const ms = (value: unknown): number => parseDuration(String(value)) ?? Number.POSITIVE_INFINITY;
const count = (value: unknown): number => (typeof value === 'number' ? value : Number.POSITIVE_INFINITY);

const lower = (why: string, measure: (value: unknown, config: Config) => number = count): Rule => ({
  kind: 'limit',
  measure,
  why,
});
const order = (strictest: readonly string[], why: string): Rule => ({ kind: 'order', strictest, why });
const trust = (why: string): Rule => ({ kind: 'trust', why });
const allow = (why: string): Rule => ({ kind: 'allow', why });
const free = (why: string): Rule => ({ kind: 'free', why });
/** A switch: true is the strict side. */
const strictWhenTrue = (why: string): Rule => order(['true', 'false'], why);

/**
 * THE table: one rule per key of the schema (the type makes a key without a rule a compile error,
 * and test/unit/config-rules.test.ts checks each rule against real files). docs/configuration.md
 * and docs/security.md carry it as `precedenceTable()` renders it (a test keeps them equal).
 */
export const RULES: Rules = {
  claude: {
    bin: trust('a binary agentbox starts as you'),
    model: free(
      'a model choice: what a run may spend is `supervisor.max_cost`’s to bound (set one in your own file)',
    ),
  },
  supervisor: {
    mode: order(
      ['rules', 'claude', 'off'],
      '`claude` spends a model call at every stop and may send the agent on; `off` lifts the iteration limit',
    ),
    max_iterations: lower('how long a run may go on'),
    max_cost: lower('what a run may spend (none: no budget)', (v) =>
      typeof v === 'number' ? v : Number.POSITIVE_INFINITY,
    ),
    timeout: lower('how long a supervisor call may take', ms),
    bin: trust('a binary agentbox starts as you'),
    model: free(
      'a model choice: what a run may spend is `supervisor.max_cost`’s to bound (set one in your own file)',
    ),
    enabled: strictWhenTrue('`false` stops enforcing the output contract and `runs.verify`'),
    timeout_profile: order(['standard', 'long', 'extended'], 'how long a run may go on'),
    max_corrections: lower('how often a run may go on after a violation'),
    fail_on_violation: strictWhenTrue('`true` fails a run at its first violation'),
    require_format_validation: strictWhenTrue('`false` stops checking the final answer'),
    allow_raw_output: order(['false', 'true'], '`true` takes an answer unchecked where no template is'),
  },
  interactive: {
    cwd: free(
      'where your own session starts; the Claude Code files there count only as trusted, like the root’s',
    ),
    restart_delay: free('pacing only: `interactive.halt_after` bounds the restarts'),
    flapping_delay: free('pacing only: `interactive.halt_after` bounds the restarts'),
    flap_window: free('pacing only: `interactive.halt_after` bounds the restarts'),
    flap_threshold: free('pacing only: `interactive.halt_after` bounds the restarts'),
    halt_after: lower('how many crashes in a row are restarted (each resumes a session, at a cost)'),
  },
  runs: {
    timeout: lower('how long a run may go on (none: `supervisor.timeout_profile`)', (v, config) =>
      ms(v ?? runTimeout(config)),
    ),
    stall_after: lower('how long a silent run goes unreported', ms),
    worktree_dir: trust('where runs write'),
    env_pass: allow('your environment variables handed to the agent'),
    fix_allowed_tools: allow('tools a fix run uses unasked'),
    verify: trust('a command agentbox runs, and the check a run must pass'),
    verify_timeout: lower('how long the check may run', ms),
    setup: trust('a command agentbox runs'),
    setup_timeout: lower('how long the setup may run', ms),
    setup_domains: allow('hosts the setup may reach'),
    restart_mode: order(['off', 'ask', 'auto'], '`auto` starts interrupted runs again unasked'),
    notify: trust('a command agentbox runs outside the sandbox'),
    notify_timeout: lower('how long the notify command may run', ms),
    notify_bell: free('cosmetic: a bell on your terminal'),
    max_parallel: lower('how many attempts run at once'),
  },
  sandbox: {
    mode: order(['required', 'off'], '`off` runs the agent without the sandbox'),
    allowed_domains: allow('hosts a run may reach'),
    deny_read: { kind: 'union', why: 'paths a run may not read: yours stay denied' },
    allow_read: {
      kind: 'yours',
      why: 'paths of your home a run may read beyond the built-in allowlist: only you widen what a run reads',
    },
  },
};

/** The rule of `section.key`; undefined for a key the table does not know. */
export function ruleOf(key: string): Rule | undefined {
  const [section, name] = key.split('.') as [string, string];
  return (RULES as unknown as Record<string, Record<string, Rule> | undefined>)[section]?.[name];
}
