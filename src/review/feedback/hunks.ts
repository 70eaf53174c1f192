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
}

export interface FileHunks {
  /** The path on the new side (`b/…`), or the old one for a deleted file. */
  readonly file: string;
  readonly hunks: readonly Hunk[];
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** A diff's files and hunks; binary files and headers give no hunks. */
export function parseHunks(patch: string): FileHunks[] {
  const files: { file: string; hunks: Hunk[] }[] = [];
  let current: { file: string; hunks: Hunk[] } | null = null;
  let hunk: { header: string; lines: string[]; newStart: number; newCount: number } | null = null;
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
      hunk = { header: line, lines: [], newStart: Number(head[1]), newCount: Number(head[2] ?? '1') };
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

/** The hunk of `file` whose new side holds `line`, or null (the line is not in the change). */
export function hunkAt(files: readonly FileHunks[], file: string, line: number): Hunk | null {
  const hunks = files.find((f) => f.file === file)?.hunks ?? [];
  return hunks.find((h) => line >= h.newStart && line < h.newStart + Math.max(h.newCount, 1)) ?? null;
}

/** Each line of a hunk with its line number on the new side (null for a removed line). */
export function numbered(hunk: Hunk): { text: string; line: number | null }[] {
  let next = hunk.newStart;
  return hunk.lines.map((text) => {
    if (text.startsWith('-') || text.startsWith('\\')) return { text, line: null };
    return { text, line: next++ };
  });
}
