export interface AuthStatus {
  readonly loggedIn: boolean;
  /** Claude Code's name for it: api_key, claude.ai, oauth_token, none … */
  readonly method: string;
  /** Where the key comes from (ANTHROPIC_API_KEY, apiKeyHelper …), when it says. */
  readonly source: string | null;
}

/**
 * `claude auth status`: whether Claude Code can talk to a model (an API key, a login, a token),
 * without spending a model call. Measured on 2.1.330: JSON on stdout; exit 0 when logged in, 1
 * when not. Throws when the answer cannot be read (an older Claude Code without the command).
 */
export async function authStatus(
  bin: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<AuthStatus> {
  // Loaded when used: execa costs ~27 ms to load, which a run that never needs it should not pay.
  const { execa } = await import('execa');
  const run = await execa(bin, ['auth', 'status'], {
    cwd,
    env: { ...env },
    extendEnv: false,
    stdin: 'ignore',
    timeout: 30_000,
    reject: false,
  });
  const out = String(run.stdout ?? '');
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(out.slice(out.indexOf('{')));
  } catch {
    throw new Error(
      `claude auth status printed no status (exit ${run.exitCode ?? run.signal}): ${out.slice(0, 120)}`,
    );
  }
  return {
    loggedIn: parsed.loggedIn === true,
    method: typeof parsed.authMethod === 'string' ? parsed.authMethod : 'unknown',
    source: typeof parsed.apiKeySource === 'string' ? parsed.apiKeySource : null,
  };
}
