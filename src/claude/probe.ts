/**
 * `claude -p /cost` in a folder: loads that folder's settings and exits without a model call;
 * its debug log says which settings it dropped (`doctor` reads it). No `.mcp.json` server starts
 * (`--strict-mcp-config`); the caller gives a folder whose settings run nothing (doctor/probe-copy.ts).
 * Never throws.
 */
export async function probeSettings(
  bin: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  debugFile: string,
): Promise<{
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
}> {
  // Loaded when used: execa costs ~27 ms to load, which a run that never needs it should not pay.
  const { execa } = await import('execa');
  const run = await execa(bin, ['-p', '/cost', '--strict-mcp-config', '--debug-file', debugFile], {
    cwd,
    env: { ...env, CLAUDE_CODE_MAX_RETRIES: '0' },
    extendEnv: false,
    stdin: 'ignore',
    timeout: 60_000,
    reject: false,
  });
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: String(run.stdout ?? ''),
    stderr: String(run.stderr ?? ''),
  };
}

/** What one request to the model API's base URL came back with. */
export type ModelProbe =
  | {
      readonly kind: 'answered';
      readonly url: string;
      readonly status: number;
      readonly ms: number;
      readonly message: string;
    }
  | { readonly kind: 'unreachable'; readonly url: string; readonly code: string; readonly message: string }
  | { readonly kind: 'timeout'; readonly url: string; readonly ms: number }
  | { readonly kind: 'not-checked'; readonly url: string; readonly why: string };

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/**
 * One request to where Claude Code sends its model calls (`ANTHROPIC_BASE_URL`, else Anthropic's
 * API): `POST /v1/messages/count_tokens`, which the API answers without spending a model call,
 * with the key Claude Code would send when it comes from the environment. Never throws.
 */
export async function probeModel(
  env: Readonly<Record<string, string | undefined>>,
  opts: { readonly model: string; readonly timeoutMs?: number },
): Promise<ModelProbe> {
  const base = (env.ANTHROPIC_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, '');
  const url = `${base}/v1/messages/count_tokens`;
  // NOTE: node's fetch ignores proxy variables; Claude Code honours them: asking directly could
  // fail where Claude Code gets through, or get through where it does not.
  const proxy = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  if (proxy) return { kind: 'not-checked', url: base, why: `model calls go through the proxy ${proxy}` };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
  };
  if (env.ANTHROPIC_API_KEY) headers['x-api-key'] = env.ANTHROPIC_API_KEY;
  if (env.ANTHROPIC_AUTH_TOKEN) headers.authorization = `Bearer ${env.ANTHROPIC_AUTH_TOKEN}`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: opts.model, messages: [{ role: 'user', content: 'ping' }] }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const body = await res.text().catch(() => '');
    return {
      kind: 'answered',
      url: base,
      status: res.status,
      ms: performance.now() - started,
      message: apiMessage(body),
    };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      return { kind: 'timeout', url: base, ms: timeoutMs };
    return {
      kind: 'unreachable',
      url: base,
      code: e.cause?.code ?? 'ERROR',
      message: e.cause?.message ?? e.message,
    };
  }
}

/** The API's `error.message` from an error body, else the body's start. Pure. */
export function apiMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON: a proxy's or a web server's page
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, 120);
}
