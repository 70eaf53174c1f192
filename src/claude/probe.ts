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
