/** The hook events a run's supervisor receives. */
export const RUN_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'SubagentStop',
  'SessionEnd',
] as const;
export type RunHookEvent = (typeof RUN_HOOK_EVENTS)[number];

/** The secret travels in this environment variable; it is never written to a file. */
export const TOKEN_VAR = 'AGENTBOX_TOKEN';

export interface RunSettingsInput {
  readonly endpointUrl: string;
  readonly deny: readonly string[];
  /** Seconds Claude Code waits for the Stop hook (the supervisor may ask a model). */
  readonly stopTimeoutSeconds: number;
  readonly events?: readonly RunHookEvent[];
}

/**
 * The `--settings` JSON for one run: http hooks to the run's endpoint and the run's deny rules.
 * NOTE: the url cannot take variables (a `${PORT}` silently drops the whole settings source),
 * so the port is written in; the secret is not: it is a header read from `$AGENTBOX_TOKEN`.
 * PreToolUse fails closed (onFailure: block): with the supervisor gone, tools stop.
 */
export function runSettings(input: RunSettingsInput): Record<string, unknown> {
  const hooks: Record<string, unknown[]> = {};
  for (const event of input.events ?? RUN_HOOK_EVENTS) {
    const timeout = event === 'Stop' || event === 'SubagentStop' ? input.stopTimeoutSeconds : 30;
    hooks[event] = [
      {
        hooks: [
          {
            type: 'http',
            url: `${input.endpointUrl}/hook/${event}`,
            headers: { Authorization: `Bearer $${TOKEN_VAR}` },
            allowedEnvVars: [TOKEN_VAR],
            timeout,
            ...(event === 'PreToolUse' ? { onFailure: 'block' } : {}),
          },
        ],
      },
    ];
  }
  return { permissions: { deny: [...input.deny] }, hooks };
}
