import { authStatus } from '../claude/auth.js';
import { visibleCredentials } from '../claude/model-key.js';
import { type ModelProbe, probeModel } from '../claude/probe.js';
import type { Env } from '../util/env.js';
import type { CheckResult } from './checks.js';

export const LOGIN_FIX =
  'set ANTHROPIC_API_KEY (a key with a spending limit), or log in: claude auth login (a long-lived token for CI: claude setup-token)';

/** The model named in the probe when agentbox.yaml names none (count_tokens needs one). */
export const PROBE_MODEL = 'claude-sonnet-4-5';

/** Claude Code has credentials: an API key, a login or a token (no model call is spent). */
export async function checkAuth(bin: string, cwd: string, env: Env): Promise<CheckResult> {
  try {
    const status = await authStatus(bin, cwd, env);
    return status.loggedIn
      ? {
          name: 'claude login',
          ok: true,
          detail: `Claude Code has credentials (${status.method}${status.source ? ` from ${status.source}` : ''})`,
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

/**
 * A login check that passed, with the credentials a fenced run's commands could read said as a
 * warning: the person decides whether those may be where an agent can reach them. Pure.
 */
export function withVisibleCredentials(check: CheckResult, env: Env): CheckResult {
  const visible = visibleCredentials(env);
  if (!check.ok || visible.length === 0) return check;
  return {
    ...check,
    warn: true,
    detail: `${check.detail}; a run's commands can read ${visible.join(', ')} (Claude Code takes ${visible.length > 1 ? 'them' : 'it'} from its environment only)`,
    fix: 'use credentials with a spending limit, or ANTHROPIC_API_KEY alone (a sandboxed run keeps it from the agent)',
  };
}

/** One request to where Claude Code sends its model calls: the model check says what came back. */
export async function checkModel(env: Env, model: string | null): Promise<CheckResult> {
  const sendsKey = Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN);
  return modelResult(await probeModel(env, { model: model ?? PROBE_MODEL }), sendsKey);
}

const BASE_URL_FIX =
  'start the model server or proxy ANTHROPIC_BASE_URL names, or correct it (unset, Claude Code calls https://api.anthropic.com)';

/**
 * The model check from what the probe got. Only an answer says Claude Code can reach a model;
 * a 401 counts when agentbox had no key to send (a claude.ai login, an apiKeyHelper): the server
 * answered, the login is checked at the first call. Pure.
 */
export function modelResult(probe: ModelProbe, sentKey: boolean): CheckResult {
  const name = 'model reachable';
  if (probe.kind === 'not-checked')
    return { name, ok: false, skipped: true, detail: `not checked: ${probe.why}` };
  if (probe.kind === 'timeout')
    return {
      name,
      ok: false,
      detail: `no answer from ${probe.url} within ${probe.ms / 1000} s`,
      fix: BASE_URL_FIX,
    };
  if (probe.kind === 'unreachable') {
    const what =
      probe.code === 'ECONNREFUSED'
        ? `connection refused at ${probe.url}: nothing listens there`
        : probe.code === 'ENOTFOUND' || probe.code === 'EAI_AGAIN'
          ? `cannot resolve the host of ${probe.url} (${probe.code})`
          : `cannot reach ${probe.url}: ${probe.message} (${probe.code})`;
    return {
      name,
      ok: false,
      detail: `${what} — every run would fail at its first model call`,
      fix: BASE_URL_FIX,
    };
  }
  const answered = `${probe.url} answered HTTP ${probe.status} in ${Math.round(probe.ms)} ms`;
  if (probe.status >= 200 && probe.status < 300)
    return { name, ok: true, detail: `Claude Code can reach a model: ${answered}` };
  if (probe.status === 401 && !sentKey)
    return {
      name,
      ok: true,
      detail: `${answered} (no key from the environment to send: the login is checked at the first call)`,
    };
  const why = probe.message ? `: ${probe.message}` : '';
  if (probe.status === 401 || probe.status === 403)
    return { name, ok: false, detail: `${answered}, refusing the credentials${why}`, fix: LOGIN_FIX };
  return {
    name,
    ok: false,
    detail: `${answered}${why}`,
    fix:
      probe.status >= 500
        ? 'the server failed: try again later, or check the proxy at ANTHROPIC_BASE_URL'
        : BASE_URL_FIX,
  };
}
