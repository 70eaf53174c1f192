/*
 * The hunks of a unified diff (a run's changes.patch), with the lines of each in the file as the
 * change leaves it: what a line comment is placed on. Pure.
 */

export interface Hunk {
  /** The `@@ … @@` line. */
  readonly header: string;
  /** Its lines after the header, as the diff has them (' ', '+', '-', '\'). */
  readonly lines: readonly string[];
  /** The first line of the new side, and how many lines it has there. */
  readonly newStart: number;
  readonly newCount: number;
  /** The same on the old side (before the change). */
  readonly oldStart: number;
  readonly oldCount: number;
}

export interface FileHunks {
  /** The path on the new side (`b/…`), or the old one for a deleted file. */
  readonly file: string;
  readonly hunks: readonly Hunk[];
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** A diff's files and hunks; binary files and headers give no hunks. */
export function parseHunks(patch: string): FileHunks[] {
  const files: { file: string; hunks: Hunk[] }[] = [];
  let current: { file: string; hunks: Hunk[] } | null = null;
  let hunk: (Hunk & { lines: string[] }) | null = null;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      current = { file: gitPath(line), hunks: [] };
      files.push(current);
      hunk = null;
      continue;
    }
    if (!current) continue;
    const head = HUNK.exec(line);
    if (head) {
      const [oldStart, oldCount, newStart, newCount] = [1, 2, 3, 4].map((i) => Number(head[i] ?? '1'));
      hunk = {
        header: line,
        lines: [],
        oldStart: oldStart!,
        oldCount: oldCount!,
        newStart: newStart!,
        newCount: newCount!,
      };
      current.hunks.push(hunk);
    } else if (hunk && /^[ +\-\\]/.test(line)) hunk.lines.push(line);
    else if (line.startsWith('+++ b/')) current.file = line.slice('+++ b/'.length);
    else hunk = null;
  }
  return files;
}

/** `diff --git a/x b/x` → x (the new side; a path with spaces stays whole). */
function gitPath(line: string): string {
  const rest = line.slice('diff --git '.length);
  const at = rest.indexOf(' b/');
  return at >= 0 ? rest.slice(at + ' b/'.length) : rest;
}

/**
 * The hunk of `file` whose new side holds `line` (`side: 'old'`: whose old side holds it, as a
 * removed line), or null (the line is not in the change).
 */
export function hunkAt(files: readonly FileHunks[], file: string, line: number, side?: 'old'): Hunk | null {
  const hunks = files.find((f) => f.file === file)?.hunks ?? [];
  const found = hunks.find((h) =>
    side === 'old'
      ? line >= h.oldStart && line < h.oldStart + h.oldCount
      : line >= h.newStart && line < h.newStart + Math.max(h.newCount, 1),
  );
  if (!found || side !== 'old') return found ?? null;
  // An old line the hunk kept (context) is commented on its new side; only a removed one is old.
  return numbered(found).some((r) => r.old === line && r.text.startsWith('-')) ? found : null;
}

/**
 * Each line of a hunk with its line number on the new side (`line`, null for a removed line) and
 * on the old side (`old`, null for an added line).
 */
export function numbered(hunk: Hunk): { text: string; line: number | null; old: number | null }[] {
  let next = hunk.newStart;
  let before = hunk.oldStart;
  return hunk.lines.map((text) => {
    if (text.startsWith('\\')) return { text, line: null, old: null };
    if (text.startsWith('-')) return { text, line: null, old: before++ };
    if (text.startsWith('+')) return { text, line: next++, old: null };
    return { text, line: next++, old: before++ };
  });
}
