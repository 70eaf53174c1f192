import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../../errors.js';
import { terminalName } from '../../util/terminal-text.js';
import { type LineComment, placeText } from './comments.js';
import { type FileHunks, hunkAt } from './hunks.js';

/*
 * Where a line comment may point, checked before a revision is spent on it: a line of the change,
 * a line of a file as the run's worktree holds it (a comment on code the change left alone, "do
 * this here too"), or a line the change removed. A file that is in neither, a line past a file's
 * end, or a "removed" line the change did not remove was accepted and sent, and only the agent
 * read that it pointed at nothing (found by a user's eye).
 */

/** What the worktree holds at a path: a file's number of lines, something else, or nothing. */
export type TreeFile = { readonly lines: number } | 'other' | 'none';

/** A comment's place, or why it is no place of this change. Pure. */
export function placeProblem(
  c: LineComment,
  files: readonly FileHunks[],
  tree: (file: string) => TreeFile,
): string | null {
  const place = `the comment on ${terminalName(placeText(c))}`;
  if (hunkAt(files, c.file, c.line, c.side)) return null;
  if (c.side === 'old')
    return `${place}: line ${c.line} of ${terminalName(c.file)} before the change is not a line the change removed`;
  const held = tree(c.file);
  if (held === 'none')
    return files.some((f) => f.file === c.file)
      ? `${place}: the change removes ${terminalName(c.file)}: name its lines by their number before it (${terminalName(c.file)}:-<line>)`
      : `${place}: ${terminalName(c.file)} is neither in the change nor in the run's worktree`;
  if (held !== 'other' && c.line > held.lines)
    return `${place}: ${terminalName(c.file)} has ${held.lines} line(s) in the run's worktree: line ${c.line} is past its end`;
  return null;
}

/** Throws a usage error naming the first comment that points nowhere; nothing is sent. */
export function checkPlaces(
  comments: readonly LineComment[],
  files: readonly FileHunks[],
  worktree: string | null,
  runId: string,
): void {
  for (const c of comments) {
    const problem = placeProblem(c, files, (file) => treeFile(worktree, file));
    if (!problem) continue;
    throw new AgentboxError('USAGE', `${problem}: nothing was sent`, {
      hint: `a place is <file>:<line> as the change leaves the file (the + side of agentbox diff ${runId}), or <file>:-<line> for a line it removed`,
    });
  }
}

/** Files larger than this are not read for their lines (any line number is taken). */
const MAX_READ = 16 * 1024 * 1024;

/**
 * What the worktree holds at `file`: the agent's files, so no link is followed and nothing but a
 * regular file is read (opened without following a link and without waiting, then checked).
 */
function treeFile(worktree: string | null, file: string): TreeFile {
  if (worktree === null) return 'other';
  const at = path.join(worktree, file);
  if (path.relative(worktree, at).startsWith('..')) return 'none';
  let fd: number;
  try {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    fd = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'none' : 'other';
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_READ) return 'other';
    const text = fs.readFileSync(fd);
    let lines = 0;
    for (const byte of text) if (byte === 0x0a) lines++;
    return { lines: text.length > 0 && text[text.length - 1] !== 0x0a ? lines + 1 : lines };
  } finally {
    fs.closeSync(fd);
  }
}
