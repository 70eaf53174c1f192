import { execa } from 'execa';
import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';

/**
 * The one way agentbox runs git (except findRepo's fast path in repo.ts): argument arrays, never
 * a shell; git's messages in the C locale, so they can be matched; a non-zero exit is data
 * (`runGit`) or one error shape (`git`, `GitError`).
 *
 * NOTE: execa, not simple-git: what happens next depends on the exit code and git's exact stderr.
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
  const result = await execa('git', args, options(call, 'utf8'));
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: stderrOf(result) };
}

/** Runs git for bytes (a patch): stdout as a Buffer, exactly as git wrote it. */
export async function runGitBytes(
  args: readonly string[],
  call: GitCall,
): Promise<{ exitCode: number; stdout: Buffer; stderr: string }> {
  const result = await execa('git', args, options({ ...call, stripFinalNewline: false }, 'buffer'));
  // execa hands back a Uint8Array: view it as a Buffer without copying a large patch.
  const out = result.stdout;
  return {
    exitCode: result.exitCode ?? -1,
    stdout: Buffer.from(out.buffer, out.byteOffset, out.byteLength),
    stderr: stderrOf({ ...result, stderr: Buffer.from(result.stderr).toString('utf8') }),
  };
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

function options<E extends 'utf8' | 'buffer'>(call: GitCall, encoding: E) {
  return {
    cwd: call.cwd,
    reject: false,
    encoding,
    env: { ...call.env, ...call.vars, ...(call.keepLocale ? {} : C_LOCALE) },
    extendEnv: call.env === undefined,
    stripFinalNewline: call.stripFinalNewline ?? true,
    ...(call.input === undefined ? {} : { input: call.input }),
  } as const;
}

/** git's message, or why git could not run (not installed, the folder is gone). */
function stderrOf(result: { stderr: string; exitCode?: number | undefined; shortMessage?: string }): string {
  if (result.exitCode === undefined && result.stderr === '') return result.shortMessage ?? '';
  return result.stderr;
}
