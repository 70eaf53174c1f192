import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { type GitCall, git } from './exec.js';

/**
 * What a patch may hold of the agent's files. A file whose content is larger is left out of the
 * patch (and never staged, so it never enters the repository's objects): GitHub warns at 50 MB,
 * and nobody reviews such a file line by line.
 */
export const FILE_MAX_BYTES = 50 * 1024 * 1024;
/**
 * The whole change's new content at most: past it the largest files are left out until it fits.
 * A binary patch is ~1.3× its content (base85), so the patch stays well under what one string of
 * node can hold (512 MiB) and what a person's review or a remote's publication should carry.
 */
export const CHANGE_MAX_BYTES = 256 * 1024 * 1024;

/** A file of the agent's left out of the patch, and why: over the file limit, or the change's. */
export interface LeftOut {
  /** Relative to the worktree, as git names it. */
  readonly path: string;
  readonly bytes: number;
  readonly why: 'file' | 'change';
}

/**
 * Which of `files` (new or changed content, with its size) stay out of the patch: each file over
 * `limits.file`, then the largest of the rest until their sum is at most `limits.change`. In path
 * order. Pure.
 */
export function leftOutOf(
  files: readonly { path: string; bytes: number }[],
  limits: { file: number; change: number } = { file: FILE_MAX_BYTES, change: CHANGE_MAX_BYTES },
): LeftOut[] {
  const out: LeftOut[] = [];
  const kept = [];
  for (const f of files) {
    if (f.bytes > limits.file) out.push({ path: f.path, bytes: f.bytes, why: 'file' });
    else kept.push(f);
  }
  let total = kept.reduce((sum, f) => sum + f.bytes, 0);
  const largestFirst = [...kept].sort((a, b) => b.bytes - a.bytes || (a.path < b.path ? -1 : 1));
  for (const f of largestFirst) {
    if (total <= limits.change) break;
    out.push({ path: f.path, bytes: f.bytes, why: 'change' });
    total -= f.bytes;
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The files `git add -A -- <pathspec>` would stage with new content (changed tracked files and
 * untracked ones not ignored), with their sizes on disk; what is not a regular file (a link, a
 * folder, a file gone) is left to git.
 * NOTE: the size is the file's apparent size: a sparse file takes no room on disk and all of it in
 * git, which reads every byte.
 */
export async function stagedSizes(
  pathspec: readonly string[],
  call: GitCall,
): Promise<{ path: string; bytes: number }[]> {
  const listed = await git(
    ['ls-files', '-z', '--modified', '--others', '--exclude-standard', '--', ...pathspec],
    {
      ...call,
      stripFinalNewline: false,
    },
  );
  const out: { path: string; bytes: number }[] = [];
  for (const name of new Set(listed.split('\0'))) {
    if (name === '') continue;
    try {
      const stat = fs.lstatSync(path.join(call.cwd, name));
      if (stat.isFile()) out.push({ path: name, bytes: stat.size });
    } catch {
      // Gone (a deletion is listed as modified): nothing of it is staged.
    }
  }
  return out;
}

/** Names kept of the files left out (in an event, a summary): the count says the rest. */
export const LISTED = 100;

/** What an end left out, as events.jsonl keeps it and the terminal shows it. */
export interface LeftOutRecord {
  readonly files: readonly LeftOut[];
  /** Files left out past the ones named. */
  readonly more: number;
}

/** The record of a patch just exported: at most LISTED named, as the event keeps them. Pure. */
export function leftOutRecord(leftOut: readonly LeftOut[] | undefined): LeftOutRecord | null {
  if (!leftOut?.length) return null;
  return { files: leftOut.slice(0, LISTED), more: Math.max(0, leftOut.length - LISTED) };
}

/**
 * What git's diff output may reach before the export gives up: under what one string of node can
 * hold (the gate reads a patch as one), and past what the limits above let through (the rest of a
 * patch is deletions and changed files' old sides, which the repository already held).
 */
export const PATCH_MAX_BYTES = 480 * 1024 * 1024;

export function patchTooLarge(worktree: string, base: string, max: number): AgentboxError {
  return new AgentboxError(
    'PATCH_TOO_LARGE',
    `the change in ${worktree} is over ${(max / 1024 / 1024).toFixed(1)} MiB as a patch: not recorded`,
    {
      hint: `the worktree is as the agent left it: see the change with "git -C ${worktree} diff --stat ${base}", and take what you want of it by hand`,
    },
  );
}
