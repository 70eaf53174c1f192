import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { exportPatch } from '../../src/git/patch.js';
import { CHANGE_MAX_BYTES, FILE_MAX_BYTES, leftOutOf, leftOutRecord } from '../../src/git/too-large.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';

const MiB = 1024 * 1024;

describe('leftOutOf: what of the agent’s files stays out of a patch', () => {
  const limits = { file: 10, change: 25 };

  it('leaves out each file over the file limit, and nothing else while the change fits', () => {
    expect(
      leftOutOf(
        [
          { path: 'b', bytes: 11 },
          { path: 'a', bytes: 10 },
          { path: 'c', bytes: 9 },
        ],
        limits,
      ),
    ).toEqual([{ path: 'b', bytes: 11, why: 'file' }]);
  });

  it('past the change limit, leaves out the largest first until the rest fits; in path order', () => {
    const files = [
      { path: 'z', bytes: 9 },
      { path: 'y', bytes: 9 },
      { path: 'x', bytes: 8 },
      { path: 'w', bytes: 1 },
      { path: 'huge', bytes: 1000 },
    ];
    // 27 bytes under the file limit: one 9-byte file out (the first by name of the two) leaves 18.
    expect(leftOutOf(files, limits)).toEqual([
      { path: 'huge', bytes: 1000, why: 'file' },
      { path: 'y', bytes: 9, why: 'change' },
    ]);
  });

  it('keeps everything at exactly the limits', () => {
    expect(leftOutOf([{ path: 'a', bytes: FILE_MAX_BYTES }])).toEqual([]);
    const fill = Array.from({ length: CHANGE_MAX_BYTES / FILE_MAX_BYTES + 1 }, (_, i) => ({
      path: `f${i}`,
      bytes: FILE_MAX_BYTES,
    }));
    // 5.12 files of 50 MiB fit in 256 MiB: of 6, one is left out.
    expect(leftOutOf(fill)).toEqual([{ path: 'f0', bytes: FILE_MAX_BYTES, why: 'change' }]);
  });

  it('a record names at most 100 files and counts the rest', () => {
    const many = Array.from({ length: 130 }, (_, i) => ({ path: `f${i}`, bytes: 1, why: 'file' as const }));
    const record = leftOutRecord(many)!;
    expect(record.files).toHaveLength(100);
    expect(record.more).toBe(30);
    expect(leftOutRecord([])).toBeNull();
  });
});

describe('exportPatch leaves a file too large out, unstaged (real git)', () => {
  let repo: TestRepo;
  afterEach(() => repo.cleanup());

  /** A sparse file: no room on disk, all of it for git, which reads every byte. */
  const sparse = (file: string, bytes: number) => {
    fs.writeFileSync(path.join(repo.dir, file), '');
    fs.truncateSync(path.join(repo.dir, file), bytes);
  };

  it('a new file over 50 MiB and a tracked file grown past it: out of the patch and the index, named', async () => {
    repo = gitRepo({ files: { 'data.bin': 'small\n', 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    sparse('core dump\nnamed', 60 * MiB);
    sparse('data.bin', 51 * MiB);
    repo.write('a.txt', 'a\nb\n');
    repo.write('ok.bin', 'x'.repeat(1000));
    const out = await exportPatch(repo.dir, { base });
    expect(out.leftOut).toEqual([
      { path: 'core dump\nnamed', bytes: 60 * MiB, why: 'file' },
      { path: 'data.bin', bytes: 51 * MiB, why: 'file' },
    ]);
    expect(out.files.map((f) => f.path).sort()).toEqual(['a.txt', 'ok.bin']);
    expect(out.patch.toString()).not.toContain('core');
    // Never staged: its bytes never entered the repository's objects.
    expect(repo.git('ls-files', '-z', '--cached').split('\0')).not.toContain('core dump\nnamed');
    expect(repo.git('diff', '--cached', '--name-only', base).trim().split('\n').sort()).toEqual([
      'a.txt',
      'ok.bin',
    ]);
    // Still in the worktree, as the agent left them.
    expect(fs.statSync(path.join(repo.dir, 'data.bin')).size).toBe(51 * MiB);
  });

  it('a file that fits is in the patch as before, a link is left to git', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    fs.symlinkSync('/dev/zero', path.join(repo.dir, 'zero'));
    repo.write('b.txt', 'b\n');
    const out = await exportPatch(repo.dir, { base });
    expect(out.leftOut).toEqual([]);
    expect(out.files.map((f) => f.path).sort()).toEqual(['b.txt', 'zero']);
  });

  it('a diff past its bound is refused with what failed, where, and how to see the change', async () => {
    repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.write('b.txt', `${'line\n'.repeat(2000)}`);
    const error = await exportPatch(repo.dir, { base, maxPatchBytes: 4096 }).catch((e: unknown) => e);
    expect(isAgentboxError(error) && error.code).toBe('PATCH_TOO_LARGE');
    expect((error as Error).message).toContain(`the change in ${repo.dir} is over 0.0 MiB as a patch`);
    expect((error as { hint: string }).hint).toContain(`git -C ${repo.dir} diff --stat ${base}`);
  });
});
