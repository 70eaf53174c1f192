import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportPatch } from '../../src/git/patch.js';
import { patchFilesOf, patchHeaders } from '../../src/git/patch-files.js';
import { addWorktree } from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of a document that gets renamed\n`).join(
  '',
);

describe('the files of a patch file (src/git/patch-files.ts)', () => {
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => vi.unstubAllEnvs());

  it('are the files the export listed, read from the whole patch or from its headers alone', async () => {
    const repo = gitRepo({
      files: {
        'a.txt': 'one\n-- not a header\n',
        'b.txt': 'gone\n',
        'docs/old.md': LINES,
        'run.sh': '#!/bin/sh\n',
        'link-to-be': 'a file that becomes a link\n',
      },
    });
    const base = repo.git('rev-parse', 'HEAD').trim();
    const wt = path.join(tempDir('agentbox-patch-files-'), 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'agentbox/run', base });
    const w = (file: string, content: string | Buffer) => {
      fs.mkdirSync(path.dirname(path.join(wt, file)), { recursive: true });
      fs.writeFileSync(path.join(wt, file), content);
    };
    // Hunk lines that read like headers: `--- x` removed, `+++ y` and `diff --git` added in content.
    w('a.txt', 'one\n++ looks like a header\n');
    fs.rmSync(path.join(wt, 'b.txt'));
    execFileSync('git', ['mv', 'docs/old.md', 'docs/new.md'], { cwd: wt });
    fs.chmodSync(path.join(wt, 'run.sh'), 0o755);
    fs.rmSync(path.join(wt, 'link-to-be'));
    fs.symlinkSync('a.txt', path.join(wt, 'link-to-be'));
    w('assets/img.bin', Buffer.from([0, 1, 2, 0, 3]));
    w('lib/new file é.ts', 'export {};\n');
    // A line longer than a read and than a header may be: skipped, its section still read.
    w('big/one-line.json', `${'x'.repeat(3 * 1024 * 1024)}\n`);
    w('z.txt', 'last\n');

    const exported = await exportPatch(wt, { base });
    const file = path.join(tempDir('agentbox-patch-file-'), 'changes.patch');
    fs.writeFileSync(file, exported.patch);
    expect(exported.files.map((f) => f.status)).toContain('type-changed');
    expect(patchFilesOf(exported.patch)).toEqual(exported.files);
    const headers = patchHeaders(file);
    expect(headers.length).toBeLessThan(4096);
    expect(patchFilesOf(headers)).toEqual(exported.files);
  });

  it('a copy, as git writes one (the export finds none: it asks for renames only)', () => {
    const patch = [
      'diff --git a/x.ts b/y.ts',
      'similarity index 100%',
      'copy from x.ts',
      'copy to y.ts',
      'diff --git a/m.ts b/m.ts',
      'old mode 100644',
      'new mode 100755',
      '',
    ].join('\n');
    expect(patchFilesOf(patch)).toEqual([
      { path: 'y.ts', status: 'copied', oldPath: 'x.ts', binary: false },
      { path: 'm.ts', status: 'modified', binary: false },
    ]);
  });
});
