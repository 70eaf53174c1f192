import type { Env } from '../util/env.js';
import { isSecretName } from './env.js';

/*
 * The model API key, out of the agent's reach. claude needs its credential, and its Bash tool hands
 * every command claude's own environment: `env` in a run printed ANTHROPIC_API_KEY, and a
 * prompt-injected agent could put it in its patch or report. In a fenced run the key goes to a file
 * in the run's private area instead (the sandbox denies it to every command, the run's deny rules
 * to the Read tool), and claude reads it from there through `apiKeyHelper`, which claude runs
 * itself, outside the sandbox, and sends as the request's key (measured with 2.1.330:
 * test/e2e/seal.test.ts). The helper's answer is in no process's environment.
 *
 * NOTE: only ANTHROPIC_API_KEY, and only when it is claude's credential: ANTHROPIC_AUTH_TOKEN wins
 * over it in claude, and is a gateway's bearer token, which an apiKeyHelper would also send as the
 * key (so it stays where it is, as does CLAUDE_CODE_OAUTH_TOKEN, a login claude handles itself).
 * docs/security.md says which credentials a run can still see.
 */
export const MODEL_KEY_VAR = 'ANTHROPIC_API_KEY';

/** The key to move out of the agent's environment, or null: none, or another credential wins. Pure. */
export function movableModelKey(env: Env): string | null {
  const key = env[MODEL_KEY_VAR];
  if (!key || env.ANTHROPIC_AUTH_TOKEN) return null;
  return key;
}

/** The `apiKeyHelper` command that prints the key kept in `file` (run by /bin/sh). Pure. */
export function keyHelperCommand(file: string): string {
  return `cat '${file.replaceAll("'", `'\\''`)}'`;
}

/** Credentials whose names do not say so (isSecretName): headers may carry `Authorization`. */
const HEADER_VARS = /^(ANTHROPIC_CUSTOM_HEADERS|OTEL_EXPORTER_OTLP_(\w+_)?HEADERS)$/;

/**
 * The environment of the commands agentbox itself runs in a run (runs.setup, runs.verify: the
 * project's code, which the agent may have rewritten): the agent's, without Claude Code's
 * credentials, which only claude needs. Pure.
 */
export function withoutModelCredentials(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isModelCredential(name)));
}

function isModelCredential(name: string): boolean {
  if (HEADER_VARS.test(name)) return true;
  return /^(ANTHROPIC|CLAUDE)_/.test(name) && isSecretName(name);
}

const truthy = (value: string | undefined): boolean => Boolean(value) && !/^(0|false|no|off)$/i.test(value!);

/**
 * Claude Code's credentials in `env` that claude would not use, so a run's claude never gets them.
 * claude hands its environment to every command of the agent, and hides only
 * CLAUDE_CODE_OAUTH_TOKEN itself (measured with 2.1.330: ANTHROPIC_FOUNDRY_API_KEY,
 * CLAUDE_CODE_OAUTH_REFRESH_TOKEN, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE reached a run's `env`); its
 * own switch that hides the rest (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB) puts empty `.env`, `.npmrc`
 * and `.gitmodules` files in the worktree, into the patch. A login is not used beside a gateway's
 * token or the API key (measured: claude sent those two, together when both were set, and no
 * login); a provider's key only with its provider; a passphrase only with its client key. Pure.
 */
export function unusedCredentials(env: Env): string[] {
  const unused: string[] = [];
  const has = (name: string) => Boolean(env[name]);
  if (has('ANTHROPIC_AUTH_TOKEN') || has(MODEL_KEY_VAR))
    unused.push('CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_OAUTH_REFRESH_TOKEN');
  if (!truthy(env.CLAUDE_CODE_USE_FOUNDRY)) unused.push('ANTHROPIC_FOUNDRY_API_KEY');
  if (!has('CLAUDE_CODE_CLIENT_KEY')) unused.push('CLAUDE_CODE_CLIENT_KEY_PASSPHRASE');
  return unused.filter(has);
}

/**
 * The credentials a fenced run's commands can still read, because claude takes them from its
 * environment only and needs them (docs/security.md "The model key"): a gateway's token (and the
 * key beside it, which then does not move), its headers, a Foundry key with Foundry on. Pure.
 */
export function visibleCredentials(env: Env): string[] {
  const has = (name: string) => Boolean(env[name]);
  return [
    'ANTHROPIC_AUTH_TOKEN',
    ...(has('ANTHROPIC_AUTH_TOKEN') ? [MODEL_KEY_VAR] : []),
    'ANTHROPIC_CUSTOM_HEADERS',
    ...(truthy(env.CLAUDE_CODE_USE_FOUNDRY) ? ['ANTHROPIC_FOUNDRY_API_KEY'] : []),
  ].filter(has);
}
