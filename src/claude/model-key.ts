import type { Env } from '../util/env.js';

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
