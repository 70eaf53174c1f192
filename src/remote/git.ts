import type { Env } from '../context.js';
import { AgentboxError } from '../errors.js';

/*
 * The git calls of publishing and fetching. NOTE: push and fetch talk to the remote with the
 * person's own environment (ssh agent, credential helpers), so `env` is the command's, whole;
 * git never asks on a terminal (a CI job has none), it fails instead.
 */

export interface GitCall {
  readonly cwd: string;
  readonly env: Env;
  /** Extra variables for this call only (GIT_INDEX_FILE, the committer). */
  readonly extra?: Readonly<Record<string, string>>;
  readonly input?: string | Buffer;
}

export interface GitOutput {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export async function gitRaw(call: GitCall, args: readonly string[]): Promise<GitOutput> {
  // Loaded when used: execa costs ~27 ms to load, which a run that never needs it should not pay.
  const { execa } = await import('execa');
  const result = await execa('git', [...args], {
    cwd: call.cwd,
    env: { ...call.env, ...call.extra, LC_ALL: 'C', LANGUAGE: 'C', GIT_TERMINAL_PROMPT: '0' },
    extendEnv: false,
    reject: false,
    encoding: 'buffer',
    stripFinalNewline: false,
    ...(call.input === undefined ? {} : { input: call.input }),
  });
  return {
    code: result.exitCode ?? 1,
    stdout: Buffer.from(result.stdout),
    stderr: Buffer.from(result.stderr).toString('utf8').trim(),
  };
}

/** git's output as text (trimmed); a failure throws GIT_FAILED with git's own words and `hint`. */
export async function git(call: GitCall, args: readonly string[], hint?: string): Promise<string> {
  const out = await gitRaw(call, args);
  if (out.code !== 0) throw gitFailed(call.cwd, args, out.stderr, hint);
  return out.stdout.toString('utf8').trim();
}

export function gitFailed(
  cwd: string,
  args: readonly string[],
  stderr: string,
  hint?: string,
): AgentboxError {
  const what = args.find((a) => !a.startsWith('-')) ?? args[0] ?? '';
  return new AgentboxError('GIT_FAILED', `git ${what} failed in ${cwd}: ${stderr || 'no message'}`, {
    hint: hint ?? `run "git -C ${cwd} ${args.slice(0, 2).join(' ')}" to see what git objects to`,
  });
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
