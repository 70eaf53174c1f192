import fs from 'node:fs';
import path from 'node:path';
import { isInside } from './paths.js';

/**
 * The memory files Claude Code reads by itself, in its own process and so outside the sandbox, from
 * a folder when a tool touches a file in it: Read, Edit and Write of `sub/f.txt` put `sub/CLAUDE.md`
 * into the tool's result (measured, Claude Code 2.1.330; Grep and Glob do not).
 */
export const MEMORY_FILES: readonly string[] = ['CLAUDE.md', 'CLAUDE.local.md'];

/** The tools whose use loads the memory files of the folders around their file (measured). */
export const LOADING_TOOLS: ReadonlySet<string> = new Set([
  'Read',
  'Edit',
  'Write',
  'MultiEdit',
  'NotebookEdit',
  'NotebookRead',
]);

/** A file Claude Code reads by itself that is a link leading where the run may not read. */
export interface MemoryLinkOut {
  /** The link, as it sits in the tree. */
  readonly file: string;
  /** Where it leads (resolved); null: nowhere that exists yet. */
  readonly real: string | null;
}

/** Where a run may read, resolved paths: the guard's read fence (src/sandbox/read-allowlist.ts). */
export type MayRead = (real: string) => boolean;

/** `file` when it is a link leading where the run may not read; null for a file, a folder or none. */
export function linkOut(file: string, mayRead: MayRead): MemoryLinkOut | null {
  try {
    if (!fs.lstatSync(file).isSymbolicLink()) return null;
  } catch {
    return null;
  }
  let real: string | null;
  try {
    real = fs.realpathSync(file);
  } catch {
    // A broken link: nothing is read through it now, but what it names may be made later.
    real = null;
  }
  return real !== null && mayRead(real) ? null : { file, real };
}

/**
 * The first memory file of the folders from `file`'s up to `tree` (absolute, as Claude Code names
 * them) that is a link leading where the run may not read; null when none, or when `file` is not
 * in the tree (Claude Code loads no memory for it). Two lstat per folder.
 */
export function memoryLinkOnTheWay(file: string, tree: string, mayRead: MayRead): MemoryLinkOut | null {
  if (!isInside(file, tree)) return null;
  for (let dir = path.dirname(file); isInside(dir, tree); dir = path.dirname(dir)) {
    for (const name of MEMORY_FILES) {
      const found = linkOut(path.join(dir, name), mayRead);
      if (found) return found;
    }
    if (dir === tree) break;
  }
  return null;
}

/** At most this many entries of `.claude/` are looked at before a run starts. */
const CLAUDE_DIR_BUDGET = 10_000;

/**
 * What Claude Code reads by itself from the tree it starts in, before any tool call: the memory
 * files at its top and everything below `.claude/` (its CLAUDE.md, rules, commands, skills, agents,
 * output styles: measured, a skill's SKILL.md goes into the system prompt whole). The first such
 * file that is a link leading where the run may not read (the `.claude` folder itself, or one of
 * its folders, as such a link included); null when none.
 */
export function startupLinkOut(tree: string, mayRead: MayRead): MemoryLinkOut | null {
  for (const name of [...MEMORY_FILES, '.claude']) {
    const found = linkOut(path.join(tree, name), mayRead);
    if (found) return found;
  }
  // A folder reached through a link that may be read is looked into too (each real folder once):
  // Claude Code reads what is below it as if it were in place.
  const pending = [path.join(tree, '.claude')];
  const visited = new Set<string>();
  let seen = 0;
  while (pending.length > 0 && seen < CLAUDE_DIR_BUDGET) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      const real = fs.realpathSync(dir);
      if (visited.has(real)) continue;
      visited.add(real);
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      seen++;
      const at = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        const found = linkOut(at, mayRead);
        if (found) return found;
        pending.push(at);
      } else if (entry.isDirectory()) pending.push(at);
    }
  }
  return null;
}

/** A memory file above the run's folder that is not the person's (nor the machine's: root's). */
export interface ForeignMemory {
  readonly file: string;
  readonly owner: number;
}

/**
 * Claude Code also reads the memory files of every folder above the one it starts in (measured,
 * 2.1.330: a CLAUDE.md and a CLAUDE.local.md in the repository's parent both went into the first
 * request, a link followed). Those folders are out of the run's tree and of any agent's reach; what
 * is there is the person's, or the machine's, or — in a folder others may write, such as /tmp —
 * another user's: a stranger's instructions, or a link to the person's files read as them. The first
 * memory file above `tree` (the link itself, not where it leads) that belongs to neither `uid` nor
 * root; null when none. Two lstat per folder.
 */
export function foreignMemoryAbove(tree: string, uid: number): ForeignMemory | null {
  for (let dir = path.dirname(tree); ; dir = path.dirname(dir)) {
    for (const name of MEMORY_FILES) {
      const file = path.join(dir, name);
      let owner: number;
      try {
        owner = fs.lstatSync(file).uid;
      } catch {
        continue;
      }
      if (owner !== uid && owner !== 0) return { file, owner };
    }
    if (path.dirname(dir) === dir) return null;
  }
}
