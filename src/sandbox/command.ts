import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type OwnedExit, spawnOwned } from '../process/owned.js';
import { writeAtomicSync } from '../util/fs.js';

/** What the sandbox around a project command fences (the run's own sandbox, as srt settings). */
export interface CommandSandbox {
  readonly writable: readonly string[];
  readonly denyWrite: readonly string[];
  readonly denyRead: readonly string[];
  /** Opened again inside denyRead (reads are denied by default: src/sandbox/read-allowlist.ts). */
  readonly allowRead: readonly string[];
  readonly allowedDomains: readonly string[];
  /**
   * The TMPDIR of the sandbox runtime and of the command (writable, opened to reads): the runtime
   * puts its proxy's sockets there, and a socket in /tmp, which the read fence hides, was hidden
   * from the command too (measured: every request through the proxy got an empty reply). Short:
   * a socket's path must stay under ~108 bytes (the run's sockDir).
   */
  readonly tmpDir: string;
}

export interface CommandResult {
  readonly ok: boolean;
  readonly command: string;
  /** null when it was killed (timeout, stopped) or could not start. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** It was stopped from outside (`signal`: Ctrl-C, agentbox stop). */
  readonly stopped: boolean;
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

export interface ProjectCommand {
  readonly command: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly sandbox: CommandSandbox | null;
  /** Where the srt settings file is written (private to agentbox), e.g. `<secrets>/setup-sandbox.json`. */
  readonly settingsFile: string;
  readonly logFile: string;
  readonly timeoutMs: number;
  /** Aborting it stops the command (and what it started). */
  readonly signal?: AbortSignal;
}

/**
 * Runs a project's own command line (`runs.setup`, `runs.verify`: a shell command the person wrote,
 * like a package.json script) in a fix run's worktree, with the given environment, in the run's
 * sandbox when it has one. Its output is appended to `logFile` as it comes. Never throws: a
 * command that cannot start, times out or is stopped is a failed one.
 */
export async function runProjectCommand(input: ProjectCommand): Promise<CommandResult> {
  const started = Date.now();
  fs.mkdirSync(path.dirname(input.logFile), { recursive: true });
  const [command, args] = commandArgv(input);
  const env = input.sandbox ? { ...input.env, TMPDIR: input.sandbox.tmpDir } : input.env;
  const log = fs.openSync(input.logFile, 'w');
  const output = outputTail(log);
  let timedOut = false;
  let stopped = false;
  let exit: OwnedExit;
  try {
    const child = spawnOwned(command, args, {
      cwd: input.cwd,
      env,
      onStdout: output.take,
      onStderr: output.take,
    });
    const timer = setTimeout(() => {
      timedOut = true;
      void child.stop(2000);
    }, input.timeoutMs);
    const onAbort = () => {
      stopped = true;
      void child.stop(2000);
    };
    if (input.signal?.aborted) onAbort();
    input.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      exit = await child.exited;
    } finally {
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
    }
  } finally {
    fs.closeSync(log);
  }
  const why = exit.spawnError
    ? `could not start: ${exit.spawnError}\n`
    : timedOut
      ? `timed out after ${Math.round(input.timeoutMs / 1000)} s\n`
      : stopped
        ? 'stopped\n'
        : '';
  const killed = timedOut || stopped;
  return {
    ok: !killed && !exit.spawnError && exit.code === 0,
    command: input.command,
    exitCode: killed ? null : exit.code,
    timedOut,
    stopped,
    durationMs: Date.now() - started,
    excerpt: `${why}${output.text()}`.trim(),
    logFile: input.logFile,
  };
}

/** The command line under `sh -c`, inside srt with the sandbox's settings written first when there is one. */
function commandArgv(input: ProjectCommand): [string, string[]] {
  if (!input.sandbox) return ['/bin/sh', ['-c', input.command]];
  writeAtomicSync(
    input.settingsFile,
    JSON.stringify({
      filesystem: {
        allowWrite: input.sandbox.writable,
        denyWrite: input.sandbox.denyWrite,
        denyRead: input.sandbox.denyRead,
        allowRead: input.sandbox.allowRead,
      },
      network: { allowedDomains: input.sandbox.allowedDomains, deniedDomains: [] },
    }),
    0o600,
  );
  return [process.execPath, [srtCli(), '-s', input.settingsFile, '-c', input.command]];
}

/** Writes the output to the log (an open fd) as it comes, and keeps its last EXCERPT_BYTES. */
function outputTail(log: number): { take: (chunk: Buffer) => void; text: () => string } {
  const tail: Buffer[] = [];
  let tailBytes = 0;
  return {
    take: (chunk) => {
      fs.writeSync(log, chunk);
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tail.length > 1 && tailBytes - tail[0]!.length >= EXCERPT_BYTES)
        tailBytes -= tail.shift()!.length;
    },
    text: () => {
      const output = Buffer.concat(tail);
      return output.subarray(Math.max(0, output.length - EXCERPT_BYTES)).toString('utf8');
    },
  };
}
