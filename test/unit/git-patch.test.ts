import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyPatch } from '../../src/git/apply.js';
import { landPatchCommit, makePatchCommit } from '../../src/git/commit-patch.js';
import {
  exportPatch,
  onlyIgnoredExcludes,
  type PatchFile,
  parseCombinedDiff,
  patchPaths,
  unquote,
} from '../../src/git/patch.js';
import { addWorktree } from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';

const Z = '0'.repeat(40);
const S = 'a'.repeat(40);
const raw = (status: string, ...paths: string[]) =>
  `:100644 100644 ${Z} ${S} ${status}\0${paths.join('\0')}\0`;

describe('parseCombinedDiff', () => {
  it('reads nothing from no output', () => {
    expect(parseCombinedDiff(Buffer.alloc(0))).toEqual({ patch: Buffer.alloc(0), files: [], stat: '' });
  });

  it.each<[string, string, PatchFile[]]>([
    ['an edit', `${raw('M', 'a.ts')}1\t1\ta.ts\0`, [{ path: 'a.ts', status: 'modified', binary: false }]],
    ['a new binary', `${raw('A', 'x.png')}-\t-\tx.png\0`, [{ path: 'x.png', status: 'added', binary: true }]],
    ['a deletion', `${raw('D', 'gone')}0\t3\tgone\0`, [{ path: 'gone', status: 'deleted', binary: false }]],
    [
      'a rename with an edit',
      `${raw('R087', 'old.md', 'new.md')}1\t1\t\0old.md\0new.md\0`,
      [{ path: 'new.md', status: 'renamed', oldPath: 'old.md', binary: false }],
    ],
    [
      'a copy',
      `${raw('C100', 'a', 'b')}0\t0\t\0a\0b\0`,
      [{ path: 'b', status: 'copied', oldPath: 'a', binary: false }],
    ],
    [
      'a type change',
      `${raw('T', 'link')}1\t1\tlink\0`,
      [{ path: 'link', status: 'type-changed', binary: false }],
    ],
    [
      'names with tabs, newlines and UTF-8',
      `${raw('A', 'a\tb\nc é.txt')}1\t0\ta\tb\nc é.txt\0`,
      [{ path: 'a\tb\nc é.txt', status: 'added', binary: false }],
    ],
    [
      'several files in order',
      `${raw('M', 'b')}${raw('A', 'a')}2\t0\tb\0-\t-\ta\0`,
      [
        { path: 'b', status: 'modified', binary: false },
        { path: 'a', status: 'added', binary: true },
      ],
    ],
  ])('reads %s', (_name, head, files) => {
    const patch = Buffer.from([0x64, 0x69, 0x66, 0x66, 0x0a, 0x00, 0xe9, 0xff]);
    const out = Buffer.concat([Buffer.from(`${head} x | 1 +\n 1 file changed\n\0`), patch]);
    const parsed = parseCombinedDiff(out);
    expect(parsed.files).toEqual(files);
    expect(parsed.stat).toBe(' x | 1 +\n 1 file changed\n');
    expect(parsed.patch.equals(patch)).toBe(true);
  });

  it.each([
    ['a numstat that names another file', `${raw('M', 'a')}1\t1\tb\0 x\n\0diff`],
    ['a missing numstat', raw('M', 'a')],
    ['a stat without the separator', `${raw('M', 'a')}1\t1\ta\0 a | 2 +-\n`],
  ])('refuses %s', (_name, out) => {
    expect(() => parseCombinedDiff(Buffer.from(out))).toThrow(/unexpected output from git diff/);
  });
});

describe('unquote', () => {
  it.each([
    ['plain', 'plain'],
    ['"a\\tb"', 'a\tb'],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ['"new\\nline"', 'new\nline'],
    ['"caf\\303\\251"', 'caf\xc3\xa9'],
  ])('%s', (quoted, expected) => {
    expect(unquote(quoted)).toBe(expected);
  });
});

describe('patchPaths', () => {
  const idx = `index ${Z}..${S}`;
  it.each<[string, string, string[]]>([
    [
      'an edit',
      `diff --git a/a.ts b/a.ts\n${idx} 100644\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-x\n+y\n`,
      ['a.ts'],
    ],
    [
      'a new file',
      `diff --git a/n.ts b/n.ts\nnew file mode 100644\n${idx}\n--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1 @@\n+x\n`,
      ['n.ts'],
    ],
    [
      'a deletion',
      `diff --git a/d.ts b/d.ts\ndeleted file mode 100644\n${idx}\n--- a/d.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n`,
      ['d.ts'],
    ],
    [
      'a rename with an edit (both sides)',
      `diff --git a/old.md b/new.md\nsimilarity index 90%\nrename from old.md\nrename to new.md\n${idx} 100644\n--- a/old.md\n+++ b/new.md\n@@ -1 +1 @@\n-x\n+y\n`,
      ['old.md', 'new.md'],
    ],
    [
      'a pure rename (no hunks)',
      'diff --git a/dir/a b/other/a\nsimilarity index 100%\nrename from dir/a\nrename to other/a\n',
      ['dir/a', 'other/a'],
    ],
    [
      'a copy (the source is untouched)',
      'diff --git a/a b/b\nsimilarity index 100%\ncopy from a\ncopy to b\n',
      ['b'],
    ],
    [
      'a new binary file',
      `diff --git a/img.png b/img.png\nnew file mode 100644\n${idx}\nGIT binary patch\nliteral 3\nKcmZQz00961\n\nliteral 0\nHcmV?d00001\n\n`,
      ['img.png'],
    ],
    ['a mode change', 'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n', ['run.sh']],
    [
      'a name with a space (--- ends in a tab)',
      `diff --git a/my file.txt b/my file.txt\n${idx} 100644\n--- a/my file.txt\t\n+++ b/my file.txt\t\n@@ -1 +1 @@\n-x\n+y\n`,
      ['my file.txt'],
    ],
    [
      'quoted names',
      `diff --git "a/t\\tab" "b/t\\tab"\nnew file mode 100644\n${idx}\n--- /dev/null\n+++ "b/t\\tab"\n@@ -0,0 +1 @@\n+x\n`,
      ['t\tab'],
    ],
    [
      'a quoted mode change',
      'diff --git "a/caf\\303\\251" "b/caf\\303\\251"\nold mode 100644\nnew mode 100755\n',
      ['café'],
    ],
    [
      'hunk lines that look like headers',
      `diff --git a/a b/a\n${idx} 100644\n--- a/a\n+++ b/a\n@@ -1,2 +1 @@\n--- b/evil\n-+++ b/evil2\n x\ndiff --git a/c b/c\nold mode 100644\nnew mode 100755\n`,
      ['a', 'c'],
    ],
  ])('reads %s', (_name, patch, expected) => {
    expect(patchPaths(patch)).toEqual(expected);
    expect(patchPaths(Buffer.from(patch))).toEqual(expected);
  });

  it('reads UTF-8 names from a patch whose hunks are latin-1', () => {
    const patch = Buffer.concat([
      Buffer.from(`diff --git a/é.txt b/é.txt\n${idx} 100644\n--- a/é.txt\n+++ b/é.txt\n@@ -1 +1 @@\n-`),
      Buffer.from('caf\xe9\n+na\xefve\n', 'latin1'),
    ]);
    expect(patchPaths(patch)).toEqual(['é.txt']);
  });
});

describe('onlyIgnoredExcludes', () => {
  const IGNORED = 'The following paths are ignored by one of your .gitignore files:';
  it.each<[string, string, string[], boolean]>([
    [
      'an ignored excluded folder',
      `${IGNORED}\n.claude/commands/run_abc123\nhint: Use -f\n`,
      ['.claude/commands/run_abc123'],
      true,
    ],
    [
      'a file inside it',
      `${IGNORED}\n.claude/commands/run_abc123/x.md\n`,
      ['.claude/commands/run_abc123'],
      true,
    ],
    [
      'an ignored path that was not excluded',
      `${IGNORED}\nsecret.env\n`,
      ['.claude/commands/run_abc123'],
      false,
    ],
    ['another error', 'fatal: Unable to create index.lock', ['x'], false],
    ['nothing', '', ['x'], false],
  ])('%s', (_name, stderr, exclude, expected) => {
    expect(onlyIgnoredExcludes(stderr, exclude)).toBe(expected);
  });
});

describe('exportPatch on a real worktree', () => {
  let repo: TestRepo;
  let dir: string;
  const env = { ...process.env, ...GIT_ENV };
  const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of a document that gets renamed\n`).join(
    '',
  );

  async function setup() {
    repo = gitRepo({
      files: {
        '.gitignore': '*.log\n',
        'src/a.ts': 'export const a = 1;\nexport const keep = true;\n',
        'src/b.ts': 'export const b = 2;\n',
        'docs/old.md': LINES,
        'run.sh': '#!/bin/sh\necho hi\n',
      },
    });
    repo.write('legacy.txt', Buffer.from('caf\xe9\nna\xefve\n', 'latin1'));
    const base = repo.commit('more');
    dir = tempDir('agentbox-patch-');
    const wt = path.join(dir, 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'agentbox/run', base });
    return { base, wt };
  }

  it('exports commits, staged, unstaged and untracked changes; applying them reproduces the worktree', async () => {
    const { base, wt } = await setup();
    const w = (file: string, content: string | Buffer) => {
      fs.mkdirSync(path.dirname(path.join(wt, file)), { recursive: true });
      fs.writeFileSync(path.join(wt, file), content);
    };
    // A commit of the agent's…
    w('src/a.ts', 'export const a = 42;\nexport const keep = true;\n');
    gitIn(wt, 'commit', '-qam', 'agent commit');
    // …then staged, unstaged and untracked changes on top.
    gitIn(wt, 'mv', 'docs/old.md', 'docs/new.md');
    w('docs/new.md', `${LINES}one more line\n`);
    fs.rmSync(path.join(wt, 'src/b.ts'));
    fs.chmodSync(path.join(wt, 'run.sh'), 0o755);
    const binary = crypto.randomBytes(4096);
    binary[0] = 0;
    binary[100] = 0;
    w('assets/img.bin', binary);
    w('latin1.txt', Buffer.from('r\xe9sum\xe9 \xa9 1999\n', 'latin1'));
    w('legacy.txt', Buffer.from('caf\xe9\nna\xefve\nd\xe9j\xe0 vu\n', 'latin1'));
    w('lib/deep/new file é.ts', 'export {};\n');
    gitIn(wt, 'add', 'lib');
    w('debug.log', 'ignored\n');
    w('.claude/commands/run_0a1b2c/scout.md', 'run-scoped command\n');

    const exported = await exportPatch(wt, { base, exclude: ['.claude/commands/run_0a1b2c'] });

    expect([...exported.files].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: 'assets/img.bin', status: 'added', binary: true },
      { path: 'docs/new.md', status: 'renamed', oldPath: 'docs/old.md', binary: false },
      { path: 'latin1.txt', status: 'added', binary: false },
      { path: 'legacy.txt', status: 'modified', binary: false },
      { path: 'lib/deep/new file é.ts', status: 'added', binary: false },
      { path: 'run.sh', status: 'modified', binary: false },
      { path: 'src/a.ts', status: 'modified', binary: false },
      { path: 'src/b.ts', status: 'deleted', binary: false },
    ]);
    expect(exported.stat).toMatch(/assets\/img\.bin +\| Bin 0 -> 4096 bytes/);
    expect(exported.stat).toMatch(/8 files changed/);
    const text = exported.patch.toString('latin1');
    expect(text).toContain('GIT binary patch');
    expect(text).toContain('old mode 100644\nnew mode 100755');
    expect(text).not.toContain('.claude');
    expect(text).not.toContain('debug.log');
    // The latin-1 bytes are in the patch as bytes, not as U+FFFD.
    expect(exported.patch.includes(Buffer.from('+d\xe9j\xe0 vu\n', 'latin1'))).toBe(true);
    // The excluded folder was not staged on the way.
    expect(gitIn(wt, 'status', '--porcelain', '--', '.claude')).toBe('?? .claude/\n');

    const patchFile = path.join(dir, 'changes.patch');
    fs.writeFileSync(patchFile, exported.patch);
    const applied = await applyPatch(repo.dir, patchFile);
    expect([...applied.files].sort()).toEqual(
      [
        'assets/img.bin',
        'docs/new.md',
        'docs/old.md',
        'latin1.txt',
        'legacy.txt',
        'lib/deep/new file é.ts',
        'run.sh',
        'src/a.ts',
        'src/b.ts',
      ].sort(),
    );
    expect(snapshotTree(repo.dir)).toEqual(snapshotTree(wt, { skip: ['.git', '.claude', 'debug.log'] }));
    expect(fs.statSync(path.join(repo.dir, 'run.sh')).mode & 0o111).toBe(0o111);
    expect(fs.readFileSync(path.join(repo.dir, 'assets/img.bin')).equals(binary)).toBe(true);
    // Applied to the working tree only: the index of main is untouched.
    expect(repo.git('diff', '--cached', '--name-only')).toBe('');
    // Committed, main's tree is the worktree's index (which never held the excluded folder).
    const made = await makePatchCommit(repo.dir, patchFile, {
      message: 'merge agentbox/run',
      exclude: [],
      config: [],
    });
    if (!('commit' in made)) throw new Error(made.message);
    await landPatchCommit(repo.dir, made, []);
    expect(repo.git('rev-parse', 'HEAD^{tree}')).toBe(gitIn(wt, 'write-tree'));
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('leaves out paths the agent staged or committed under an excluded folder', async () => {
    const { base, wt } = await setup();
    fs.mkdirSync(path.join(wt, '.claude/commands/run_x'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.claude/commands/run_x/a.md'), 'a\n');
    fs.writeFileSync(path.join(wt, 'kept.txt'), 'kept\n');
    gitIn(wt, 'add', '-A');
    gitIn(wt, 'commit', '-qm', 'agent committed the run folder');
    const exported = await exportPatch(wt, { base, exclude: ['.claude/commands/run_x/'] });
    expect(exported.files).toEqual([{ path: 'kept.txt', status: 'added', binary: false }]);
    expect(exported.patch.toString()).not.toContain('.claude');
  });

  it('treats exclude paths literally', async () => {
    const { base, wt } = await setup();
    fs.writeFileSync(path.join(wt, 'a*'), 'glob-like name\n');
    fs.writeFileSync(path.join(wt, 'ab'), 'plain\n');
    const exported = await exportPatch(wt, { base, exclude: ['a*'] });
    expect(exported.files.map((f) => f.path)).toEqual(['ab']);
  });

  it('returns an empty patch when nothing changed', async () => {
    const { base, wt } = await setup();
    fs.writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
    const exported = await exportPatch(wt, { base });
    expect(exported).toEqual({ patch: Buffer.alloc(0), files: [], leftOut: [], stat: '' });
  });

  it('ignores user config that would change the patch', async () => {
    const { base, wt } = await setup();
    for (const [key, value] of [
      ['diff.noprefix', 'true'],
      ['diff.mnemonicPrefix', 'true'],
      ['color.ui', 'always'],
      ['diff.renames', 'false'],
      ['diff.external', 'false'],
      ['core.quotePath', 'true'],
    ] as const) {
      repo.git('config', key, value);
    }
    fs.renameSync(path.join(wt, 'docs/old.md'), path.join(wt, 'docs/moved.md'));
    fs.writeFileSync(path.join(wt, 'src/a.ts'), 'changed\n');
    const exported = await exportPatch(wt, { base });
    expect(exported.files.map((f) => f.status)).toEqual(['renamed', 'modified']);
    const text = exported.patch.toString();
    expect(text).toContain('diff --git a/src/a.ts b/src/a.ts\n');
    expect(text).not.toContain('\x1b[');
  });

  it('names a base that is not a commit', async () => {
    const { wt } = await setup();
    await expect(exportPatch(wt, { base: 'nosuch' })).rejects.toMatchObject({ code: 'BAD_REVISION' });
  });
});

describe('exportPatch with an excluded folder that git ignores', () => {
  it('exports the rest and leaves the folder out (git add exits 1 there, which is fine)', async () => {
    const repo = gitRepo({ files: { '.gitignore': '.claude/commands/run_*/\n', 'a.txt': 'a\n' } });
    const dir = tempDir('agentbox-patch-');
    const base = repo.git('rev-parse', 'HEAD').trim();
    const wt = path.join(dir, 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'agentbox/ignored', base });
    fs.mkdirSync(path.join(wt, '.claude/commands/run_abc123'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.claude/commands/run_abc123/fix_abc123.md'), 'x');
    fs.writeFileSync(path.join(wt, 'a.txt'), 'changed\n');
    const out = await exportPatch(wt, { base, exclude: ['.claude/commands/run_abc123'] });
    expect(out.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(out.patch.toString('utf8')).not.toContain('run_abc123');
  });
});
