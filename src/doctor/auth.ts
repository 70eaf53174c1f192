import { authStatus } from '../claude/auth.js';
import type { Env } from '../util/env.js';
import type { CheckResult } from './checks.js';

export const LOGIN_FIX =
  'set ANTHROPIC_API_KEY (a key with a spending limit), or log in: claude auth login (a long-lived token for CI: claude setup-token)';

/** Claude Code can talk to a model: an API key, a login or a token (no model call is spent). */
export async function checkAuth(bin: string, cwd: string, env: Env): Promise<CheckResult> {
  try {
    const status = await authStatus(bin, cwd, env);
    return status.loggedIn
      ? {
          name: 'claude login',
          ok: true,
          detail: `Claude Code can reach a model (${status.method}${status.source ? ` from ${status.source}` : ''})`,
        }
      : {
          name: 'claude login',
          ok: false,
          detail:
            'Claude Code is not logged in and has no API key: every run would fail at its first model call',
          fix: LOGIN_FIX,
        };
  } catch (error) {
    return {
      name: 'claude login',
      ok: false,
      detail: `could not ask Claude Code: ${(error as Error).message}`,
      fix: 'update Claude Code (npm i -g @anthropic-ai/claude-code), or check it runs: claude --version',
    };
  }
}
