import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { spawnOwned } from '../process/owned.js';

/** What the sandbox around the verification command fences (the run's own sandbox). */
export interface VerifySandbox {
  readonly writable: readonly string[];
  readonly denyWrite: readonly string[];
  readonly denyRead: readonly string[];
  readonly allowedDomains: readonly string[];
}

export interface VerifyResult {
  readonly ok: boolean;
  readonly command: string;
  /** null when it was killed (timeout) or could not start. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** The end of its output (stdout and stderr as they came), for the agent and the report. */
  readonly excerpt: string;
  /** The whole output, in the run folder. */
  readonly logFile: string;
}

const EXCERPT_BYTES = 3000;

/**
 * `srt`, Anthropic's sandbox runtime (the code Claude Code's own sandbox is built on): bubblewrap
 * + a filtering proxy on Linux, Seatbelt on macOS.
 */
function srtCli(): string {
  const require = createRequire(import.meta.url);
  return require.resolve('@anthropic-ai/sandbox-runtime/dist/cli.js');
}

/**
 * Runs the project's verification command (`runs.verify`, a shell command line the person wrote,
 * like a package.json script) in the run's worktree, with the agent's environment, in the same
 * sandbox as the agent's own commands when the run has one. Never throws: a command that cannot
 * start or times out is a failed verification.
 */
export async function runVerify(input: {
  readonly command: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly sandbox: VerifySandbox | null;
  /** Where the srt settings file may be written (private to agentbox). */
  readonly privateDir: string;
  readonly logFile: string;
  readonly timeoutMs: number;
}): Promise<VerifyResult> {
  const started = Date.now();
  fs.mkdirSync(path.dirname(input.logFile), { recursive: true });
  let argv: [string, string[]];
  if (input.sandbox) {
    const settings = path.join(input.privateDir, 'verify-sandbox.json');
    fs.writeFileSync(
      settings,
      JSON.stringify({
        filesystem: {
          allowWrite: input.sandbox.writable,
          denyWrite: input.sandbox.denyWrite,
          denyRead: input.sandbox.denyRead,
        },
        network: { allowedDomains: input.sandbox.allowedDomains, deniedDomains: [] },
      }),
      { mode: 0o600 },
    );
    argv = [process.execPath, [srtCli(), '-s', settings, '-c', input.command]];
  } else argv = ['/bin/sh', ['-c', input.command]];

  const chunks: Buffer[] = [];
  const child = spawnOwned(argv[0], argv[1], {
    cwd: input.cwd,
    env: input.env,
    onStdout: (c) => chunks.push(c),
    onStderr: (c) => chunks.push(c),
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void child.stop(2000);
  }, input.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  const output = Buffer.concat(chunks);
  fs.writeFileSync(input.logFile, output);
  const text = output.subarray(Math.max(0, output.length - EXCERPT_BYTES)).toString('utf8');
  const why = exit.spawnError
    ? `could not start: ${exit.spawnError}\n`
    : timedOut
      ? `timed out after ${Math.round(input.timeoutMs / 1000)} s\n`
      : '';
  return {
    ok: !timedOut && !exit.spawnError && exit.code === 0,
    command: input.command,
    exitCode: timedOut ? null : exit.code,
    timedOut,
    durationMs: Date.now() - started,
    excerpt: `${why}${text}`.trim(),
    logFile: input.logFile,
  };
}
