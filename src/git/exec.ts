import { type ChildProcess, spawn } from 'node:child_process';
import { AgentboxError } from '../errors.js';
import { ownerEnv } from '../process/owner.js';
import type { Env } from '../util/env.js';
import { type GitSettings, inertEnv } from './inert.js';
import { inPrefetchScope, prefetch, takePrefetched } from './prefetch.js';

/**
 * The one way agentbox runs git (except findRepo's fast path in repo.ts): argument arrays, never
 * a shell; settings that keep anything an agent or a repository wrote from running (inert.ts);
 * git's messages in the C locale, so they can be matched; a non-zero exit is data
 * (`runGit`) or one error shape (`git`, `GitError`).
 *
 * NOTE: node's own spawn, not simple-git: what happens next depends on the exit code and git's
 * exact stderr. Nor execa: loading it cost every command that runs git ~27 ms (a scout's whole
 * budget over plain claude is 200), for what these twenty lines do.
 */
export interface GitCall {
  /** The folder git runs in. */
  readonly cwd: string;
  /**
   * The command's environment (CommandContext.env): git sees exactly it. Absent, git inherits
   * agentbox's own, which at the CLI is the same environment.
   */
  readonly env?: Env;
  /** Variables for this call only, over `env` (a private index, agentbox's identity). */
  readonly vars?: Readonly<Record<string, string>>;
  /** Written to git's stdin (`--pathspec-from-file=-`, `commit-tree -F -`, blobs to hash). */
  readonly input?: string | Uint8Array;
  /** What to do next when the call fails, for the person reading the error. */
  readonly hint?: string;
  /** git speaks the person's language: its output is shown to them, never matched. */
  readonly keepLocale?: boolean;
  /** false: keep the final newline (output passed on as it is). */
  readonly stripFinalNewline?: boolean;
  /**
   * Reads where the person's hooks are (`config core.hooksPath`, `rev-parse --git-path hooks`)
   * as they set it, not as the runner's /dev/null. Only for such reads: no call runs a hook
   * (src/git/inert.ts).
   */
  readonly personHooksPath?: boolean;
  /** Settings for this call only, over the inert ones (merge's filters switched off). */
  readonly config?: GitSettings;
  /** The person's pager settings are read (`git var GIT_PAGER` for `agentbox diff`); else `cat`. */
  readonly personPager?: boolean;
  /**
   * Past this many bytes of stdout git is killed and the call ends `cut` (exit code -1): output a
   * stranger's objects size (a fetched tree's listing) is never read whole.
   */
  readonly maxStdout?: number;
}

export interface GitResult {
  /** git's exit code; -1 when git could not be started at all. */
  readonly exitCode: number;
  /** Without the final newline. */
  readonly stdout: string;
  readonly stderr: string;
}

export const C_LOCALE = { LC_ALL: 'C', LANGUAGE: 'C' } as const;

/** Runs git; a non-zero exit is returned, not thrown. */
export async function runGit(args: readonly string[], call: GitCall): Promise<GitResult> {
  const result = await spawnGit(args, call);
  const strip = call.stripFinalNewline ?? true;
  return {
    exitCode: result.exitCode,
    stdout: finalNewline(result.stdout.toString('utf8'), strip),
    stderr: finalNewline(result.stderr, strip),
  };
}

/** Runs git for bytes (a patch): stdout as a Buffer, exactly as git wrote it. */
export function runGitBytes(
  args: readonly string[],
  call: GitCall,
): Promise<{ exitCode: number; stdout: Buffer; stderr: string; cut?: true }> {
  return spawnGit(args, call);
}

/**
 * Runs git and returns its stdout without the final newline; a non-zero exit throws a GitError.
 * NOTE: not trimmed further: a `-z` listing may begin with a space that belongs to its first record.
 */
export async function git(args: readonly string[], call: GitCall): Promise<string> {
  const result = await runGit(args, call);
  if (result.exitCode !== 0) throw new GitError(args, call, result);
  return result.stdout;
}

/** A git command that failed: the arguments, where, git's exit code and its message. */
export class GitError extends AgentboxError {
  readonly args: readonly string[];
  readonly cwd: string;
  readonly gitExitCode: number;
  /** git's stderr, at most a few lines of it. */
  readonly stderr: string;

  constructor(args: readonly string[], call: GitCall, result: Pick<GitResult, 'exitCode' | 'stderr'>) {
    const stderr = excerpt(result.stderr) || `exit code ${result.exitCode}`;
    super('GIT_FAILED', `git ${shown(args)} failed in ${call.cwd}: ${stderr}`, {
      hint: call.hint ?? `run "git -C ${call.cwd} ${shown(args)}" to see git's full message`,
    });
    this.args = args;
    this.cwd = call.cwd;
    this.gitExitCode = result.exitCode;
    this.stderr = stderr;
  }
}

const EXCERPT_LINES = 5;
const EXCERPT_CHARS = 600;

/** The first lines of git's stderr, enough to act on, short enough for one message. Pure. */
export function excerpt(stderr: string): string {
  const lines = stderr.trim().split(/\r?\n/);
  let text = lines.slice(0, EXCERPT_LINES).join('\n');
  if (text.length > EXCERPT_CHARS) text = `${text.slice(0, EXCERPT_CHARS)}…`;
  return lines.length > EXCERPT_LINES ? `${text}\n…` : text;
}

/** The arguments as a person would type them (quoted where a shell would need it). Pure. */
export function shown(args: readonly string[]): string {
  return args.map((a) => (/^[\w./:=@^{}%,+-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
}

const finalNewline = (text: string, strip: boolean) => (strip ? text.replace(/\r?\n$/, '') : text);

/**
 * git as a child: argument array, no shell, stdin only when there is input. Never rejects: git
 * that cannot start (not installed, the folder gone) is exit code -1 with why in stderr, as is git
 * killed by a signal.
 */
function spawnGit(
  args: readonly string[],
  call: GitCall,
): Promise<{ exitCode: number; stdout: Buffer; stderr: string; cut?: true }> {
  // (a key only within a prefetch scope: outside one, no git call pays for it)
  const key = inPrefetchScope() ? prefetchKey(args, call) : null;
  return (key !== null && takePrefetched(key)) || startGit(args, call);
}

/**
 * Starts a plain read now whose answer the command takes later (src/git/prefetch.ts): the same
 * arguments and call, within the command's prefetch scope. Nothing outside a scope.
 */
export function prefetchGit(args: readonly string[], call: GitCall): void {
  const key = prefetchKey(args, call);
  if (key !== null) prefetch(key, () => startGit(args, call));
}

/** What identifies a call whose answer may be taken from a prefetch; null: never prefetched. */
function prefetchKey(args: readonly string[], call: GitCall): string | null {
  const plain =
    call.input === undefined &&
    call.maxStdout === undefined &&
    call.config === undefined &&
    !call.personHooksPath &&
    !call.personPager &&
    !call.keepLocale;
  return plain ? JSON.stringify([call.cwd, args, call.vars ?? null, call.env ?? null]) : null;
}

function startGit(
  args: readonly string[],
  call: GitCall,
): Promise<{ exitCode: number; stdout: Buffer; stderr: string; cut?: true }> {
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    let bytes = 0;
    const stderr: Buffer[] = [];
    const child = spawn('git', args, {
      cwd: call.cwd,
      env: gitEnv(call),
      stdio: [call.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    own(child);
    const failed = (why: string) =>
      resolve({
        exitCode: -1,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString('utf8') || why,
      });
    child.on('error', (error) => failed(`Command failed with ${error.message}: git ${shown(args)}`));
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (call.maxStdout === undefined || bytes <= call.maxStdout) stdout.push(chunk);
      else if (child.kill('SIGKILL'))
        resolve({
          exitCode: -1,
          stdout: Buffer.alloc(0),
          stderr: `output past ${call.maxStdout} bytes`,
          cut: true,
        });
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('close', (code, signal) => {
      if (code === null) return failed(`Command was killed with ${signal}: git ${shown(args)}`);
      resolve({
        exitCode: code,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
    // git may exit before reading all of it (a bad argument): that is its exit code's to say.
    child.stdin?.on('error', () => {});
    child.stdin?.end(call.input);
  });
}

const running = new Set<ChildProcess>();

/**
 * A git still running when agentbox exits is ended with it (as execa's cleanup did): children are
 * owned. The pager git names (pager.ts) is owned the same way.
 */
export function own(child: ChildProcess): void {
  if (running.size === 0) process.once('exit', endRunning);
  running.add(child);
  child.once('close', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', endRunning);
  });
}

function endRunning(): void {
  for (const child of running) child.kill('SIGTERM');
}

/**
 * The passed environment, plus `vars` and the C locale, made inert (src/git/inert.ts): nothing
 * an agent or a cloned repository wrote runs. Without one, the command's process's (at the CLI
 * agentbox's own; for a resident agentbox, its client's: src/process/owner.ts).
 */
function gitEnv(call: GitCall): NodeJS.ProcessEnv {
  const env = { ...(call.env ?? ownerEnv()), ...call.vars, ...(call.keepLocale ? {} : C_LOCALE) };
  return inertEnv(env, {
    personHooksPath: call.personHooksPath === true,
    personPager: call.personPager === true,
    ...(call.config ? { config: call.config } : {}),
  });
}
