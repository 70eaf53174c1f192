import type { Env } from '../context.js';
import { GitError, type GitCall as RunnerCall, runGitBytes } from '../git/exec.js';
import { AGENTBOX_IDENTITY } from '../git/result-commit.js';

/*
 * The git calls of publishing and fetching, through the one runner (src/git/exec.ts). NOTE: push
 * and fetch talk to the remote with the person's own environment (ssh agent, credential helpers),
 * so `env` is the command's, whole; git never asks on a terminal (a CI job has none), it fails
 * instead. Output comes back as bytes: blobs and `-z` listings are not text.
 */

export interface GitCall {
  readonly cwd: string;
  readonly env: Env;
  /** Extra variables for this call only (GIT_INDEX_FILE, the committer). */
  readonly extra?: Readonly<Record<string, string>>;
  readonly input?: string | Buffer;
  /** Past this many bytes of output git is stopped, and the output is `cut` (src/git/exec.ts). */
  readonly maxStdout?: number;
}

export interface GitOutput {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly cut?: true;
}

function runnerCall(call: GitCall, hint?: string): RunnerCall {
  return {
    cwd: call.cwd,
    env: call.env,
    vars: { ...call.extra, GIT_TERMINAL_PROMPT: '0' },
    ...(call.input === undefined ? {} : { input: call.input }),
    ...(call.maxStdout === undefined ? {} : { maxStdout: call.maxStdout }),
    ...(hint === undefined ? {} : { hint }),
  };
}

/** git's exit code, stdout as bytes and stderr: a failure is data here. */
export async function gitRaw(call: GitCall, args: readonly string[]): Promise<GitOutput> {
  const out = await runGitBytes(args, runnerCall(call));
  return {
    code: out.exitCode,
    stdout: out.stdout,
    stderr: out.stderr.trim(),
    ...(out.cut ? { cut: true } : {}),
  };
}

/** git's output as text (trimmed); a failure throws the runner's GitError with `hint`. */
export async function git(call: GitCall, args: readonly string[], hint?: string): Promise<string> {
  const out = await gitRaw(call, args);
  if (out.code !== 0) throw gitFailed(call.cwd, args, out.stderr, hint, out.code);
  return out.stdout.toString('utf8').trim();
}

export function gitFailed(
  cwd: string,
  args: readonly string[],
  stderr: string,
  hint?: string,
  exitCode = 1,
): GitError {
  return new GitError(args, { cwd, ...(hint === undefined ? {} : { hint }) }, { exitCode, stderr });
}

/** The empty tree's id: diffing against it lists every file of a tree. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface TreeFile {
  readonly mode: string;
  readonly blob: string;
  readonly path: string;
}

/**
 * `git diff-tree -r -z --stdin` output for "<empty tree> <tree>" lines → each tree's files. Pure.
 * A header line ("<a> <b>\n") names the tree; each entry is ":<m1> <m2> <s1> <s2> A\0<path>\0".
 */
export function parseTreeListing(out: Buffer): Map<string, TreeFile[]> {
  const trees = new Map<string, TreeFile[]>();
  let current: TreeFile[] | undefined;
  let at = 0;
  while (at < out.length) {
    if (out[at] === 0x3a) {
      const metaEnd = out.indexOf(0, at);
      const pathEnd = out.indexOf(0, metaEnd + 1);
      if (metaEnd < 0 || pathEnd < 0) break;
      const [, mode, , blob] = out.toString('latin1', at + 1, metaEnd).split(' ');
      const file = out.toString('utf8', metaEnd + 1, pathEnd);
      if (current && mode && blob) current.push({ mode, blob, path: file });
      at = pathEnd + 1;
      continue;
    }
    const end = out.indexOf(0x0a, at);
    const header = out.toString('latin1', at, end < 0 ? out.length : end).split(' ');
    current = [];
    if (header[1]) trees.set(header[1], current);
    at = end < 0 ? out.length : end + 1;
  }
  return trees;
}

/** `git cat-file --batch` output → each object's bytes by id (missing objects are left out). Pure. */
export function parseBatch(out: Buffer): Map<string, Buffer> {
  const objects = new Map<string, Buffer>();
  let at = 0;
  while (at < out.length) {
    const end = out.indexOf(0x0a, at);
    if (end < 0) break;
    const [id, type, size] = out.toString('latin1', at, end).split(' ');
    if (type === 'missing' || size === undefined || !id) {
      at = end + 1;
      continue;
    }
    const start = end + 1;
    const bytes = Number(size);
    objects.set(id, out.subarray(start, start + bytes));
    at = start + bytes + 1;
  }
  return objects;
}

/**
 * The identity a publication is committed under: the person's own (git's user.name and
 * user.email, or GIT_AUTHOR_* and GIT_COMMITTER_*), as where it is fetched it names who claims
 * what the run's state says; agentbox's own only where git has none (a bare CI runner).
 */
export async function publisherIdentity(call: GitCall): Promise<Readonly<Record<string, string>>> {
  for (const who of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'])
    if ((await gitRaw(call, ['var', who])).code !== 0) return AGENTBOX_IDENTITY;
  return {};
}
