import fs from 'node:fs';
import type { PatchFile, PatchFileStatus } from './patch.js';
import { type Entry, parseEntries } from './patch-entries.js';

/**
 * The lines a patch's headers are made of. A hunk's line starts with `+`, `-`, ` ` or `\`, and a
 * binary patch's with a letter and no space, so `diff --git ` always starts a section; the hunk
 * lines kept with the headers (`--- x`, `+++ x`) are ones parseEntries reads as hunk lines.
 */
const HEADER =
  /^(diff --git |old mode |new mode |new file mode |deleted file mode |index |rename from |rename to |copy from |copy to |--- |\+\+\+ |GIT binary patch|Binary files )/;
/** A line longer than this that is not a header yet is a hunk's: its rest is skipped, not kept. */
const HEADER_MAX = 64 * 1024;

/**
 * The header lines of a patch file, read a chunk at a time: what the files it changes are made of,
 * without holding a patch of hundreds of MB (one the web page does not show) in memory.
 */
export function patchHeaders(file: string): Buffer {
  const kept: Buffer[] = [];
  let line: Buffer[] = [];
  let size = 0;
  let skipping = false;
  const end = () => {
    const whole = Buffer.concat(line);
    if (!skipping && HEADER.test(whole.toString('latin1'))) kept.push(whole, Buffer.from('\n'));
    line = [];
    size = 0;
    skipping = false;
  };
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(1024 * 1024);
    for (let n = fs.readSync(fd, chunk); n > 0; n = fs.readSync(fd, chunk)) {
      let from = 0;
      for (let nl = chunk.indexOf(10, from); nl >= 0 && nl < n; nl = chunk.indexOf(10, from)) {
        if (!skipping) line.push(Buffer.from(chunk.subarray(from, nl)));
        end();
        from = nl + 1;
      }
      if (!skipping && from < n) {
        line.push(Buffer.from(chunk.subarray(from, n)));
        size += n - from;
        skipping = size > HEADER_MAX && !HEADER.test(Buffer.concat(line).toString('latin1'));
        if (skipping) line = [];
      }
    }
    end();
  } finally {
    fs.closeSync(fd);
  }
  return Buffer.concat(kept);
}

const typeOf = (mode: string | null) => mode?.slice(0, 3) ?? null;

/** One section's status, as `git diff --raw` would say it. */
function statusOf(e: Entry): PatchFileStatus {
  if (e.oldPath === null) return 'added';
  if (e.newPath === null) return 'deleted';
  if (e.copy) return 'copied';
  if (e.oldPath !== e.newPath) return 'renamed';
  return typeOf(e.oldMode) !== typeOf(e.newMode) ? 'type-changed' : 'modified';
}

/**
 * The files a patch changes, as the export listed them (src/git/patch.ts, `git diff --raw`): a
 * type change — git's two sections of one path, its deletion then its creation — is one file. Pure.
 */
export function patchFilesOf(patch: Buffer | string): PatchFile[] {
  const files: PatchFile[] = [];
  for (const e of parseEntries(patch)) {
    const status = statusOf(e);
    const path = e.newPath ?? e.oldPath ?? '';
    const before = files.at(-1);
    if (before?.path === path && before.status === 'deleted' && status === 'added') {
      before.status = 'type-changed';
      before.binary ||= e.binary;
      continue;
    }
    files.push({
      path,
      status,
      ...(status === 'renamed' || status === 'copied' ? { oldPath: e.oldPath ?? '' } : {}),
      binary: e.binary,
    });
  }
  return files;
}
