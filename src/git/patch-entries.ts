import { terminalName } from '../util/terminal-text.js';
import { unquote } from './patch.js';

/**
 * The sections of a git patch, headers parsed (paths, modes, copy, binary) and hunks kept only as
 * the new side's lines: what src/git/sensitive.ts inspects. Pure.
 */
/** One `diff --git` section, as far as inspection needs it. */
export interface Entry {
  oldPath: string | null;
  newPath: string | null;
  oldMode: string | null;
  newMode: string | null;
  copy: boolean;
  binary: boolean;
  /** The new side of the hunks (context and added lines), and whether it ends without a newline. */
  lines: string[];
  noNewline: boolean;
}

export const LINK = '120000';
export const EXECUTABLE = '100755';
/** A submodule's commit, not a file (git's gitlink). */
export const GITLINK = '160000';

/**
 * The `diff --git` sections of a patch: headers parsed, hunks kept only as the new side's lines.
 * NOTE: read as latin-1 (one char per byte, any encoding passes) and turned back into UTF-8 at
 * the end; C-quoted names are octal bytes too.
 */
export function parseEntries(patch: Buffer | string): Entry[] {
  const text = (typeof patch === 'string' ? Buffer.from(patch) : patch).toString('latin1');
  const entries: Entry[] = [];
  let entry: Entry | null = null;
  let part: Part = 'header';
  let newSide = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const [oldPath, newPath] = gitLineNames(line.slice('diff --git '.length));
      entry = {
        oldPath,
        newPath,
        oldMode: null,
        newMode: null,
        copy: false,
        binary: false,
        lines: [],
        noNewline: false,
      };
      entries.push(entry);
      part = 'header';
    } else if (entry && part === 'header') {
      part = readHeader(entry, line);
    } else if (entry && part === 'hunks') {
      // `\ No newline at end of file` is about the line before it.
      if (line.startsWith('\\')) entry.noNewline ||= newSide;
      newSide = line.startsWith('+') || line.startsWith(' ');
      if (newSide) entry.lines.push(line.slice(1));
    }
  }
  return entries.map((e) => ({
    ...e,
    oldPath: e.oldPath === null ? null : utf8(e.oldPath),
    newPath: e.newPath === null ? null : utf8(e.newPath),
    lines: e.lines.map(utf8),
  }));
}

type Part = 'header' | 'hunks' | 'binary';

/** Reads one header line into `entry`; returns the part of the section the next line is in. */
function readHeader(entry: Entry, line: string): Part {
  const after = (prefix: string) => line.slice(prefix.length);
  if (line.startsWith('old mode ')) entry.oldMode = after('old mode ');
  else if (line.startsWith('new mode ')) entry.newMode = after('new mode ');
  else if (line.startsWith('new file mode ')) {
    entry.newMode = after('new file mode ');
    entry.oldPath = null;
  } else if (line.startsWith('deleted file mode ')) {
    entry.oldMode = after('deleted file mode ');
    entry.newPath = null;
  } else if (line.startsWith('index ')) {
    // `index <old>..<new> <mode>`: the mode of a file whose mode did not change.
    const mode = line.split(' ')[2];
    if (mode && entry.oldPath !== null) entry.oldMode ??= mode;
    if (mode && entry.newPath !== null) entry.newMode ??= mode;
  } else if (line.startsWith('rename from ') || line.startsWith('copy from ')) {
    entry.oldPath = unquote(line.slice(line.indexOf(' from ') + 6));
  } else if (line.startsWith('rename to ') || line.startsWith('copy to ')) {
    entry.newPath = unquote(line.slice(line.indexOf(' to ') + 4));
    entry.copy = line.startsWith('copy');
  } else if (line.startsWith('--- ')) {
    entry.oldPath = headerName(after('--- '));
  } else if (line.startsWith('+++ ')) {
    entry.newPath = headerName(after('+++ '));
    return 'hunks';
  } else if (line === 'GIT binary patch' || line.startsWith('Binary files ')) {
    entry.binary = true;
    return 'binary';
  }
  return 'header';
}

/** What follows `diff --git `, either side C-quoted → both names. Unquoted ones split in the middle. */
function gitLineNames(rest: string): [string | null, string | null] {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    return [stripPrefix(unquote(rest.slice(0, end + 1))), stripPrefix(unquote(rest.slice(end + 2)))];
  }
  const quoted = rest.indexOf(' "');
  if (quoted >= 0) return [stripPrefix(rest.slice(0, quoted)), stripPrefix(unquote(rest.slice(quoted + 1)))];
  // Same names on both sides (renames name theirs in `rename from/to`).
  const half = (rest.length - 1) / 2;
  if (!Number.isInteger(half)) return [null, null];
  return [stripPrefix(rest.slice(0, half)), stripPrefix(rest.slice(half + 1))];
}

function closingQuote(raw: string): number {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] === '\\') i++;
    else if (raw[i] === '"') return i;
  }
  return raw.length - 1;
}

/** `a/x`, `"a/x\tq"` (C-quoted) or `a/x y\t` (a name with a space) → `x`; /dev/null → null. */
function headerName(raw: string): string | null {
  const name = raw.startsWith('"') ? unquote(raw) : raw.replace(/\t$/, '');
  return name === '/dev/null' ? null : stripPrefix(name);
}

function stripPrefix(name: string): string {
  return name.slice(name.indexOf('/') + 1);
}

function utf8(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}

/**
 * `git apply --summary`'s lines (` create mode 100644 x`, ` delete mode …`, ` mode change a => b x`,
 * ` rename a => b`, ` copy a => b`), each name as terminalName shows it. git writes its summary's
 * names raw, a line end and an escape sequence included (its `--stat` quotes them), so a file named
 * "x\nnothing else to merge" printed a line of its own under merge's stat. Pure.
 */
export function summaryLines(entries: readonly Entry[]): string[] {
  const lines: string[] = [];
  for (const e of entries) {
    const name = (p: string) => terminalName(p);
    if (e.oldPath === null && e.newPath !== null)
      lines.push(` create mode ${e.newMode ?? ''} ${name(e.newPath)}`);
    else if (e.newPath === null && e.oldPath !== null)
      lines.push(` delete mode ${e.oldMode ?? ''} ${name(e.oldPath)}`);
    else if (e.oldPath !== null && e.newPath !== null) {
      if (e.oldPath !== e.newPath)
        lines.push(` ${e.copy ? 'copy' : 'rename'} ${name(e.oldPath)} => ${name(e.newPath)}`);
      if (e.oldMode !== null && e.newMode !== null && e.oldMode !== e.newMode)
        lines.push(` mode change ${e.oldMode} => ${e.newMode} ${name(e.newPath)}`);
    }
  }
  return lines;
}
