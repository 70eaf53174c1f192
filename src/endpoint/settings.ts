import { fileURLToPath } from 'node:url';

/** Events delivered by http hooks: in-process in Claude Code, the cheapest per call. */
export const HTTP_HOOK_EVENTS = [
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'Stop',
  'SubagentStop',
  'SessionEnd',
] as const;
/** Events Claude Code fires only for command hooks (measured: an http SessionStart never fires). */
export const COMMAND_HOOK_EVENTS = ['SessionStart'] as const;
export const RUN_HOOK_EVENTS = [...COMMAND_HOOK_EVENTS, ...HTTP_HOOK_EVENTS] as const;
export type RunHookEvent = (typeof RUN_HOOK_EVENTS)[number];

/** The secret travels in this environment variable; it is never written to a file. */
export const TOKEN_VAR = 'AGENTBOX_TOKEN';
/** The endpoint's base URL, for the command-hook script. */
export const URL_VAR = 'AGENTBOX_URL';

/** The tiny forwarding script for command hooks (hooks/ sits two levels above src/endpoint and dist/endpoint). */
export const HOOK_SCRIPT = fileURLToPath(new URL('../../hooks/agentbox-hook.mjs', import.meta.url));

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface RunSettingsInput {
  readonly endpointUrl: string;
  readonly deny: readonly string[];
  /** Seconds Claude Code waits for the Stop hook (the supervisor may ask a model). */
  readonly stopTimeoutSeconds: number;
  readonly events?: readonly RunHookEvent[];
  /** The node binary that runs the command-hook script. */
  readonly node?: string;
}

/**
 * The `--settings` JSON for one run: hooks to the run's endpoint and the run's deny rules.
 * NOTE: an http hook's url cannot take variables (a `${PORT}` silently drops the whole settings
 * source), so the port is written in; the secret is not: it is a header read from `$AGENTBOX_TOKEN`.
 * PreToolUse fails closed (onFailure: block): with the supervisor gone, tools stop.
 */
export function runSettings(input: RunSettingsInput): Record<string, unknown> {
  const hooks: Record<string, unknown[]> = {};
  for (const event of input.events ?? RUN_HOOK_EVENTS) {
    const timeout = event === 'Stop' || event === 'SubagentStop' ? input.stopTimeoutSeconds : 30;
    const hook = (COMMAND_HOOK_EVENTS as readonly string[]).includes(event)
      ? {
          type: 'command',
          command: `${shellQuote(input.node ?? process.execPath)} ${shellQuote(HOOK_SCRIPT)} ${event}`,
          timeout,
        }
      : {
          type: 'http',
          url: `${input.endpointUrl}/hook/${event}`,
          headers: { Authorization: `Bearer $${TOKEN_VAR}` },
          allowedEnvVars: [TOKEN_VAR],
          timeout,
          ...(event === 'PreToolUse' ? { onFailure: 'block' } : {}),
        };
    hooks[event] = [{ hooks: [hook] }];
  }
  return { permissions: { deny: [...input.deny] }, hooks };
}
