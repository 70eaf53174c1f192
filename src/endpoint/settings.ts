import { fileURLToPath } from 'node:url';
import { DENY_RULES, GUARD_EVENT, GUARD_GROUP } from '../settings/guard.js';

/**
 * The run's address book for the command-hook script: `{ "url", "token" }`, in a file of the run's
 * private area (never in an environment variable the agent could print).
 */
export function hookAddressBook(endpoint: { url: string; token: string }): string {
  return `${JSON.stringify({ url: endpoint.url, token: endpoint.token })}\n`;
}

/** The tiny forwarding script for command hooks (hooks/ sits two levels above src/endpoint and dist/endpoint). */
export const HOOK_SCRIPT = fileURLToPath(new URL('../../hooks/agentbox-hook.mjs', import.meta.url));

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** A path may go into a permission-rule pattern only when it has no character the rule syntax reads. */
const ruleSafe = (p: string) => /^[A-Za-z0-9._/-]+$/.test(p);

export interface RunSettingsInput {
  readonly endpointUrl: string;
  /** The endpoint's secret, written into the hooks' headers: these settings go to a private file. */
  readonly token: string;
  /** The address book the command-hook script reads (see hookAddressBook). */
  readonly hookFile: string;
  /** Claude Code's sandbox block (src/sandbox/settings.ts), when the run has one. */
  readonly sandbox?: Record<string, unknown>;
  readonly deny: readonly string[];
  /** Seconds Claude Code waits for the Stop hook (the supervisor may ask a model). */
  readonly stopTimeoutSeconds: number;
  /** What the airlock must see before it runs. */
  readonly guard: {
    readonly ledgerDir: string;
    readonly repoRoot: string;
    /** A run that may edit (fix): Bash naming the main tree goes through the guard. */
    readonly writes: boolean;
    /**
     * Send every Write/Edit through the guard too (default on). Sandboxed, Claude Code's own
     * permission rules already refuse a write tool outside the worktree, but a write inside it
     * loads the CLAUDE.md files around it in claude's own process, outside the sandbox, which the
     * guard checks for links out (src/airlock/memory-links.ts).
     */
    readonly writeTools?: boolean;
    /** Guard every Bash call, not only those naming the ledger, agentbox or the repository. */
    readonly everyBashCall?: boolean;
    /**
     * Send every Read, Grep and Glob call through the guard (a sandboxed run): those tools ignore
     * the sandbox's read fence (measured), and a permission rule cannot say "deny the home but
     * these paths". Costs one hook round trip per call (2–8 ms).
     */
    readonly everyRead?: boolean;
  };
  /**
   * Where the run learns what claude's stream also says: the stream (headless runs, which read it
   * anyway: the tool history, and the session's start from its init line, see
   * src/run/begin/session-start.ts) or hooks (interactive sessions, which have no stream: PostToolUse,
   * and SessionStart through the command-hook script).
   */
  readonly history: 'stream' | 'hooks';
  /** The node binary that runs the command-hook script. */
  readonly node?: string;
}

type Hook = Record<string, unknown>;
type Group = { matcher?: string; hooks: Hook[] };

/**
 * The `--settings` JSON for one run: its hooks, aimed at the run's endpoint, and its deny rules.
 *
 * Measured (bench/hooks.bench.ts): every hook Claude Code runs costs it 2–8 ms of its own time per
 * tool call, our handler 0.1 ms. So a hook fires only where it decides something: `if` conditions
 * (checked inside Claude Code, free) keep the guard's Bash and Read hooks to the calls that name the
 * ledger, agentbox or the main tree; write tools are guarded in every run that may write (the
 * CLAUDE.md a write loads, src/airlock/memory-links.ts); the tool history of
 * a headless run comes from its stream, not from PostToolUse hooks.
 * NOTE: an http hook's url cannot take variables (a `${PORT}` silently drops the whole settings
 * source), so the port is written in, and so is the secret, as a header: these settings are written
 * to a file in the run's private area, which the agent can neither read nor list. (A header read
 * from an environment variable put the secret where the agent's `env` printed it.)
 * NOTE: Claude Code never fires an http SessionStart hook, only command hooks: in an interactive
 * session SessionStart goes through hooks/agentbox-hook.mjs. A headless run has no SessionStart
 * hook: claude waits for a command hook before its first request, and the node process it starts
 * cost a scout ~30-45 ms (bench/scout-overhead.bench.ts) for a line the stream's init gives anyway.
 * NOTE: a headless run has no UserPromptSubmit or SessionEnd hook either: the endpoint only logged
 * them (the prompt is agentbox's own, the session's end is claude's exit, both in the stream), and
 * each is a round trip claude waits for, through its sandbox's proxy, before its first request
 * and before it exits (bench/scout-overhead.bench.ts). A person's session keeps them: its turns
 * start there.
 * PreToolUse fails closed (onFailure: block): with the supervisor gone, guarded tools stop.
 */
/** The `if` rules of the Bash guard: the commands that name what a run must not touch. */
function bashGuardRules(repoRoot: string, writes: boolean): string[] {
  // NOTE: not `*agentbox*`: the default worktree folder (~/.local/share/agentbox/…) would match it
  // on every command that names a path of the worktree.
  const rules = [
    'Bash(*.agents*)',
    'Bash(*agentbox merge*)',
    'Bash(*agentbox discard*)',
    'Bash(*agentbox apply*)',
    'Bash(*agentbox.cjs*)',
    'Bash(*agentbox.js*)',
    // A run calling Claude Code or a model API itself (direct_execution): refused early and logged.
    'Bash(*claude*)',
    'Bash(*anthropic*)',
  ];
  if (writes) rules.push(`Bash(*${repoRoot}*)`);
  return rules;
}

export function runSettings(input: RunSettingsInput): Record<string, unknown> {
  const http = (event: string, extra: Hook = {}): Hook => ({
    type: 'http',
    url: `${input.endpointUrl}/hook/${event}`,
    headers: { Authorization: `Bearer ${input.token}` },
    timeout: event === 'Stop' || event === 'SubagentStop' ? input.stopTimeoutSeconds : 30,
    ...(event === 'PreToolUse' ? { onFailure: 'block' } : {}),
    ...extra,
  });
  const { ledgerDir, repoRoot, writes } = input.guard;
  const when = (rule: string) => ({ if: rule });

  const bashGuards = bashGuardRules(repoRoot, writes);
  const pre: Group[] = [
    // A path the rule syntax cannot hold is guarded on every call instead: slower, never weaker.
    {
      matcher: 'Bash',
      hooks:
        [ledgerDir, repoRoot].every(ruleSafe) && !input.guard.everyBashCall
          ? bashGuards.map((r) => http('PreToolUse', when(r)))
          : [http('PreToolUse')],
    },
    input.guard.everyRead
      ? { matcher: 'Read|Grep|Glob|LS|NotebookRead', hooks: [http('PreToolUse')] }
      : {
          matcher: 'Read',
          hooks: [
            ruleSafe(ledgerDir) ? http('PreToolUse', when(`Read(/${ledgerDir}/**)`)) : http('PreToolUse'),
          ],
        },
    { matcher: 'Skill|SlashCommand|Task|Agent', hooks: [http('PreToolUse')] },
  ];
  if (writes && (input.guard.writeTools ?? true))
    pre.push({ matcher: 'Write|Edit|MultiEdit|NotebookEdit', hooks: [http('PreToolUse')] });

  const post = (event: string): Group[] =>
    input.history === 'hooks'
      ? [{ hooks: [http(event)] }]
      : [{ matcher: 'Task|Agent', hooks: [http(event)] }];
  const command = `${shellQuote(input.node ?? process.execPath)} ${shellQuote(HOOK_SCRIPT)} SessionStart ${shellQuote(input.hookFile)}`;
  const session = input.history === 'hooks';
  const hooks: Record<string, Group[]> = {
    ...(session ? { SessionStart: [{ hooks: [{ type: 'command', command, timeout: 30 }] }] } : {}),
    ...(session ? { UserPromptSubmit: [{ hooks: [http('UserPromptSubmit')] }] } : {}),
    PreToolUse: pre,
    PostToolUse: post('PostToolUse'),
    PostToolUseFailure: post('PostToolUseFailure'),
    Stop: [{ hooks: [http('Stop')] }],
    SubagentStop: [{ hooks: [http('SubagentStop')] }],
    ...(session ? { SessionEnd: [{ hooks: [http('SessionEnd')] }] } : {}),
  };
  return { permissions: { deny: [...input.deny] }, hooks, ...input.sandbox };
}

/**
 * A launch's settings with agentbox's repository guard added (init's deny rules and Bash guard hook,
 * src/settings/guard.ts): for a launch that does not load the project's settings file (an untrusted
 * repository, see src/trust/), where init's copy of them would be left out with everything else.
 */
export function withRepoGuard(settings: Record<string, unknown>): Record<string, unknown> {
  const permissions = (settings.permissions ?? {}) as { deny?: string[] };
  const hooks = (settings.hooks ?? {}) as Record<string, unknown[]>;
  const deny = [...(permissions.deny ?? [])];
  for (const rule of DENY_RULES) if (!deny.includes(rule)) deny.push(rule);
  return {
    ...settings,
    permissions: { ...permissions, deny },
    hooks: { ...hooks, [GUARD_EVENT]: [...(hooks[GUARD_EVENT] ?? []), GUARD_GROUP] },
  };
}
