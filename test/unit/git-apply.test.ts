import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyPatch, checkPatch, parseApplyErrors, patchStat, realNames } from '../../src/git/apply.js';
import { landPatchCommit, makePatchCommit, uncommittedIn } from '../../src/git/commit-patch.js';
import { exportPatch } from '../../src/git/patch.js';
import { addWorktree } from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';

describe('realNames: git writes a control character of a name as ? in its messages', () => {
  const paths = ['src/a.ts', 'ev\x1b]0;t\x07il.txt', 'x1.txt', 'x2.txt', 'what?.txt'];
  it.each([
    ['a plain name stays', 'src/a.ts', 'src/a.ts'],
    ['the one path it stands for', 'ev?]0;t?il.txt', 'ev\x1b]0;t\x07il.txt'],
    ['a real ? in a name', 'what?.txt', 'what?.txt'],
    ['no path matches: as git wrote it', 'gone?.txt', 'gone?.txt'],
  ])('%s', (_, named, expected) => {
    expect(realNames([named], paths)).toEqual([expected]);
  });

  it('a ? that could be either of two paths stays as git wrote it', () => {
    expect(realNames(['x?.txt'], ['x\x01.txt', 'x\x02.txt'])).toEqual(['x?.txt']);
  });
});

describe('conflictNames: a name with a line end spans two lines of git’s message', () => {
  it('checkPatch names it, from real git (it was "conflicts in (see below)")', async () => {
    const name = 'c\x1b]0;T\x07\nx.txt';
    const dir = tempDir('agentbox-conflict-name-');
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: dir, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
    git('init', '-q');
    fs.writeFileSync(path.join(dir, name), 'a\n');
    fs.writeFileSync(path.join(dir, 'plain.txt'), 'a\n');
    git('add', '-A');
    git('commit', '-qm', 'base');
    fs.writeFileSync(path.join(dir, name), 'b\n');
    fs.writeFileSync(path.join(dir, 'plain.txt'), 'b\n');
    const patchFile = path.join(dir, 'p.patch');
    fs.writeFileSync(patchFile, git('diff', '--binary'));
    git('checkout', '-q', '--', '.');
    fs.writeFileSync(path.join(dir, name), 'mine\n');
    const check = await checkPatch(dir, patchFile);
    expect(check).toMatchObject({ ok: false, conflicts: [name] });
    fs.writeFileSync(path.join(dir, 'plain.txt'), 'mine too\n');
    expect(await checkPatch(dir, patchFile)).toMatchObject({ ok: false, conflicts: ['plain.txt', name] });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('parseApplyErrors', () => {
  it.each<[string, string, string[]]>([
    ['nothing', '', []],
    ['a failed hunk', 'error: patch failed: a.ts:3\nerror: a.ts: patch does not apply\n', ['a.ts']],
    [
      'a name with a colon',
      'error: patch failed: dir/a:b.ts:12\nerror: dir/a:b.ts: patch does not apply',
      ['dir/a:b.ts'],
    ],
    ['a name with spaces', 'error: patch failed: my dir/my file.ts:1', ['my dir/my file.ts']],
    ['an index mismatch', 'error: a.ts: does not match index', ['a.ts']],
    ['a file in the way', 'error: b.txt: already exists in working directory', ['b.txt']],
    ['a file in the index', 'error: b.txt: already exists in index', ['b.txt']],
    ['a missing file', 'error: c.txt: No such file or directory', ['c.txt']],
    ['a missing index entry', 'error: c.txt: does not exist in index', ['c.txt']],
    [
      'a binary without full index',
      "error: cannot apply binary patch to 'x.png' without full index line",
      ['x.png'],
    ],
    [
      'a changed binary',
      "error: the patch applies to 'x.png' (84f89896142e9787c5d891c43b2a5de72e7a7f91), which does not match the current contents.\nerror: x.png: patch does not apply",
      ['x.png'],
    ],
    ['a binary that does not apply', "error: binary patch does not apply to 'x.png'", ['x.png']],
    ['a non-empty file', "error: the patch applies to an empty 'e.txt' but it is not empty", ['e.txt']],
    ['a type mismatch', 'error: link has type 100644, expected 120000', ['link']],
    ['a mode mismatch', 'error: new mode (100755) of run.sh does not match old mode (100644)', ['run.sh']],
    ['a symlink in the way', "error: affected file 'l/x' is beyond a symbolic link", ['l/x']],
    ['a deleted file with content left', 'error: deleted file d.txt still has contents', ['d.txt']],
    [
      'several, in order, each once',
      'error: patch failed: z.ts:1\nerror: z.ts: patch does not apply\nerror: a.ts: No such file or directory\nerror: patch failed: z.ts:9\n',
      ['z.ts', 'a.ts'],
    ],
    ['CRLF', 'error: patch failed: a.ts:3\r\nerror: b.ts: does not match index\r\n', ['a.ts', 'b.ts']],
    [
      'no file named',
      'error: corrupt patch at line 5\nerror: No valid patches in input (allow with "--allow-empty")',
      [],
    ],
    [
      'warnings',
      'warning: a.ts has type 100644, expected 100755\nwarning: 1 line adds whitespace errors.',
      [],
    ],
  ])('reads %s', (_name, stderr, expected) => {
    expect(parseApplyErrors(stderr)).toEqual(expected);
  });
});

describe('applying a patch to a real repository', () => {
  let repo: TestRepo;
  let dir: string;
  const env = { ...process.env, ...GIT_ENV };
  const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });
  const png = crypto.randomBytes(512);
  png[7] = 0;

  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A repository and a patch made by a run: edits a.ts, b.png and z.ts, adds c.txt, adds a-clean.txt. */
  async function setup() {
    repo = gitRepo({ files: { 'a.ts': 'one\ntwo\nthree\n', 'z.ts': 'z\n', 's.txt': 's\n', 'u.txt': 'u\n' } });
    repo.write('b.png', png);
    const base = repo.commit('binary');
    dir = tempDir('agentbox-apply-');
    const wt = path.join(dir, 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'run', base });
    fs.writeFileSync(path.join(wt, 'a-clean.txt'), 'applies cleanly\n');
    fs.writeFileSync(path.join(wt, 'a.ts'), 'one\nTWO\nthree\n');
    fs.writeFileSync(path.join(wt, 'b.png'), crypto.randomBytes(512));
    fs.writeFileSync(path.join(wt, 'z.ts'), 'zz\n');
    const patchFile = path.join(dir, 'changes.patch');
    fs.writeFileSync(patchFile, (await exportPatch(wt, { base })).patch);
    return { patchFile, wt };
  }

  /** Everything `git apply` could have touched: the files, and main's index. */
  const state = () => {
    // NOTE: status first: it may refresh the index file (stat data, cache-tree) on its own.
    const status = repo.git('status', '--porcelain');
    const index = fs.readFileSync(path.join(repo.dir, '.git', 'index')).toString('base64');
    return { tree: snapshotTree(repo.dir), index, status };
  };

  it('patchStat describes the patch', async () => {
    const { patchFile } = await setup();
    const stat = await patchStat(repo.dir, patchFile);
    expect(stat).toMatch(/a\.ts +\| +2 \+-/);
    expect(stat).toMatch(/b\.png +\| +Bin/);
    expect(stat).toContain('4 files changed');
    expect(stat).toContain('create mode 100644 a-clean.txt');
  });

  it('patchStat’s summary names every file as terminalName does: git writes its --summary names raw, a line end included', async () => {
    // A name with a line end printed its tail as a line of its own under merge's stat (found by a user's eye).
    const spoof = 'evil\nnothing else to merge, safe';
    const esc = 'a\x1b[31mb';
    const dir = tempDir('agentbox-summary-');
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: dir, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
    git('init', '-q');
    for (const f of ['gone.txt', 'run.sh', 'old.txt'])
      fs.writeFileSync(path.join(dir, f), `${f} line one\nline two\nline three\n`);
    git('add', '-A');
    git('commit', '-qm', 'base');
    fs.writeFileSync(path.join(dir, spoof), 'x\n');
    fs.writeFileSync(path.join(dir, esc), 'y\n');
    fs.rmSync(path.join(dir, 'gone.txt'));
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    git('mv', 'old.txt', 'new.txt');
    git('add', '-A');
    const patchFile = path.join(dir, 'p.patch');
    fs.writeFileSync(patchFile, git('diff', '--cached', '-M', '--binary'));
    git('reset', '-q', '--hard');
    const stat = await patchStat(dir, patchFile);
    expect(stat).not.toMatch(/\x1b/);
    expect(
      stat.split('\n').filter((l) => l.startsWith(' ') && !l.includes('|') && !l.includes('changed')),
    ).toEqual([
      ' create mode 100644 "a\\x1b[31mb"',
      ' create mode 100644 "evil\\nnothing else to merge, safe"',
      ' delete mode 100644 gone.txt',
      ' rename old.txt => new.txt',
      ' mode change 100644 => 100755 run.sh',
    ]);
    expect(stat).not.toContain('\nnothing else to merge');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('checkPatch says it applies, and changes nothing', async () => {
    const { patchFile } = await setup();
    const before = state();
    expect(await checkPatch(repo.dir, patchFile)).toEqual({
      ok: true,
      files: ['a-clean.txt', 'a.ts', 'b.png', 'z.ts'],
    });
    expect(state()).toEqual(before);
  });

  it('checkPatch names the conflicting files', async () => {
    const { patchFile } = await setup();
    repo.write('a.ts', 'one\nzwei\nthree\n');
    repo.write('b.png', crypto.randomBytes(512));
    const before = state();
    const result = await checkPatch(repo.dir, patchFile);
    expect(result).toMatchObject({ ok: false, conflicts: ['a.ts', 'b.png'] });
    expect(result.ok === false && result.message).toContain('error: patch failed: a.ts:1');
    expect(state()).toEqual(before);
  });

  it('applyPatch applies to the working tree, not the index', async () => {
    const { patchFile, wt } = await setup();
    expect(await applyPatch(repo.dir, patchFile)).toEqual({
      files: ['a-clean.txt', 'a.ts', 'b.png', 'z.ts'],
    });
    expect(snapshotTree(repo.dir)).toEqual(snapshotTree(wt));
    expect(repo.git('diff', '--cached', '--name-only')).toBe('');
  });

  it('a conflicting applyPatch throws MERGE_CONFLICT and leaves the tree byte-identical', async () => {
    const { patchFile } = await setup();
    // main changed the same lines (committed) and the binary (uncommitted); a-clean.txt and z.ts
    // would apply, and must not be written either.
    repo.write('a.ts', 'one\nzwei\nthree\n');
    repo.commit('main moved on');
    repo.write('b.png', crypto.randomBytes(512));
    const before = state();
    const error = await applyPatch(repo.dir, patchFile).catch((e) => e);
    expect(error).toMatchObject({
      code: 'MERGE_CONFLICT',
      message: `the patch does not apply to ${repo.dir}: conflicts in a.ts, b.png`,
    });
    expect(error.hint).toContain('nothing was changed');
    expect(error.hint).toContain(`git apply --3way ${patchFile}`);
    expect(state()).toEqual(before);
    expect(repo.exists('a-clean.txt')).toBe(false);
    expect(repo.read('z.ts')).toBe('z\n');
  });

  it('a patch creating a file that exists is a conflict too', async () => {
    const { patchFile } = await setup();
    repo.write('a-clean.txt', 'mine\n');
    const before = state();
    await expect(applyPatch(repo.dir, patchFile)).rejects.toMatchObject({
      code: 'MERGE_CONFLICT',
      message: expect.stringMatching(/conflicts in a-clean\.txt$/),
    });
    expect(state()).toEqual(before);
  });

  it('an empty patch applies as nothing', async () => {
    repo = gitRepo();
    dir = tempDir('agentbox-apply-');
    const empty = path.join(dir, 'empty.patch');
    fs.writeFileSync(empty, '');
    expect(await applyPatch(repo.dir, empty)).toEqual({ files: [] });
    expect(await checkPatch(repo.dir, empty)).toEqual({ ok: true, files: [] });
    expect(await patchStat(repo.dir, empty)).toBe('');
  });

  it('a patch that is not a patch is GIT_FAILED and changes nothing', async () => {
    repo = gitRepo();
    dir = tempDir('agentbox-apply-');
    const garbage = path.join(dir, 'garbage.patch');
    fs.writeFileSync(garbage, 'diff --git a/x b/x\n@@ nonsense\n');
    const before = state();
    await expect(applyPatch(repo.dir, garbage)).rejects.toMatchObject({ code: 'GIT_FAILED' });
    expect(await checkPatch(repo.dir, garbage)).toMatchObject({ ok: false, conflicts: [] });
    expect(state()).toEqual(before);
  });

  it('a missing patch file is IO_FAILED', async () => {
    repo = gitRepo();
    await expect(applyPatch(repo.dir, 'no/such.patch')).rejects.toMatchObject({
      code: 'IO_FAILED',
      message: expect.stringContaining(path.join(repo.dir, 'no/such.patch')),
    });
  });

  describe('makePatchCommit, then landPatchCommit: the commit is HEAD plus the patch', () => {
    /** main with the user's own work in progress: s.txt staged, u.txt unstaged. */
    async function withUserWork() {
      const { patchFile, wt } = await setup();
      // The run also deletes z.ts, renames s-like content and adds an ignored-looking file.
      fs.rmSync(path.join(wt, 'z.ts'));
      fs.mkdirSync(path.join(wt, 'new dir'));
      fs.writeFileSync(path.join(wt, 'new dir/n*.txt'), 'glob-like name\n');
      gitIn(wt, 'mv', 'a.ts', 'renamed.ts');
      fs.writeFileSync(patchFile, (await exportPatch(wt, { base: 'main' })).patch);
      repo.write('s.txt', 's\nstaged by the user\n');
      repo.git('add', 's.txt');
      repo.write('u.txt', 'u\nunstaged by the user\n');
      return { patchFile, staged: repo.git('diff', '--cached'), unstaged: repo.git('diff') };
    }
    const commitOf = async (patchFile: string, message = 'agentbox: merge run') => {
      const made = await makePatchCommit(repo.dir, patchFile, { message, exclude: [], config: [] });
      if (!('commit' in made)) throw new Error(`refused: ${made.message}`);
      return made;
    };

    it('commits exactly the patch’s files and keeps the user’s staged and unstaged work', async () => {
      const { patchFile, staged, unstaged } = await withUserWork();
      const made = await commitOf(patchFile);
      const { files } = await applyPatch(repo.dir, patchFile);
      await landPatchCommit(repo.dir, made, []);
      expect(made.commit).toBe(repo.git('rev-parse', 'HEAD').trim());
      expect(repo.git('log', '-1', '--format=%s')).toBe('agentbox: merge run\n');
      const changed = repo.git('show', '--name-status', '--format=', '-M', 'HEAD').replace(/^R\d+/m, 'R');
      expect(changed.split('\n').filter(Boolean).sort()).toEqual(
        ['A\ta-clean.txt', 'A\tnew dir/n*.txt', 'D\tz.ts', 'M\tb.png', 'R\ta.ts\trenamed.ts'].sort(),
      );
      expect(repo.git('diff', '--cached')).toBe(staged);
      expect(repo.git('diff')).toBe(unstaged);
      expect(repo.git('status', '--porcelain')).toBe('M  s.txt\n M u.txt\n');
      expect(await uncommittedIn(repo.dir, files, [])).toEqual([]);
      expect(repo.git('reflog', '-1', '--format=%gs')).toBe('commit: agentbox: merge run\n');
    });

    it('commits a new file that main’s .gitignore matches', async () => {
      repo = gitRepo({ files: { '.gitignore': '*.gen\n' } });
      const patchFile = path.join(tempDir('agentbox-gen-'), 'changes.patch');
      fs.writeFileSync(
        patchFile,
        'diff --git a/out.gen b/out.gen\nnew file mode 100644\n--- /dev/null\n+++ b/out.gen\n@@ -0,0 +1 @@\n+generated\n',
      );
      const made = await commitOf(patchFile, 'add generated file');
      await applyPatch(repo.dir, patchFile);
      await landPatchCommit(repo.dir, made, []);
      expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe('out.gen\n');
      expect(repo.git('status', '--porcelain', '--ignored')).toBe('');
    });

    it('changes nothing when git cannot make the commit (a signing program that fails)', async () => {
      const { patchFile } = await withUserWork();
      const before = state();
      const head = repo.git('rev-parse', 'HEAD');
      repo.git('config', 'commit.gpgSign', 'true');
      repo.git('config', 'gpg.program', 'false');
      await expect(commitOf(patchFile)).rejects.toMatchObject({
        code: 'GIT_FAILED',
        message: expect.stringContaining('failed to sign'),
      });
      expect(repo.git('rev-parse', 'HEAD')).toBe(head);
      expect(state()).toEqual(before);
    });

    it('signs the commit when the person signs theirs (commit.gpgSign)', async () => {
      const { patchFile } = await setup();
      const gpg = path.join(tempDir('agentbox-gpg-'), 'gpg');
      fs.writeFileSync(
        gpg,
        '#!/bin/sh\ncat >/dev/null\necho "[GNUPG:] SIG_CREATED " >&2\nprintf "%s\\n" "-----BEGIN PGP SIGNATURE-----" fake "-----END PGP SIGNATURE-----"\n',
        { mode: 0o755 },
      );
      repo.git('config', 'commit.gpgSign', 'true');
      repo.git('config', 'gpg.program', gpg);
      const made = await commitOf(patchFile);
      expect(repo.git('cat-file', 'commit', made.commit)).toMatch(/^gpgsig -----BEGIN PGP SIGNATURE-----$/m);
    });

    it('leaves HEAD and the index as they were when the branch moved after the commit was made', async () => {
      const { patchFile, staged } = await withUserWork();
      const made = await commitOf(patchFile);
      // Another commit on the branch meanwhile (of the same tree: what is staged stays staged).
      const other = repo.git('commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'meanwhile').trim();
      repo.git('update-ref', 'refs/heads/main', other);
      const head = repo.git('rev-parse', 'HEAD');
      await expect(landPatchCommit(repo.dir, made, [])).rejects.toMatchObject({ code: 'GIT_FAILED' });
      expect(repo.git('rev-parse', 'HEAD')).toBe(head);
      expect(repo.git('diff', '--cached')).toBe(staged);
    });

    it('runs no hook of the person’s, post-commit included', async () => {
      const { patchFile } = await setup();
      const marks = tempDir('agentbox-marks-');
      for (const name of [
        'pre-commit',
        'commit-msg',
        'post-commit',
        'post-index-change',
        'reference-transaction',
      ])
        fs.writeFileSync(path.join(repo.dir, '.git/hooks', name), `#!/bin/sh\ntouch '${marks}/${name}'\n`, {
          mode: 0o755,
        });
      const made = await commitOf(patchFile);
      await applyPatch(repo.dir, patchFile);
      await landPatchCommit(repo.dir, made, []);
      expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toContain('a-clean.txt\n');
      expect(fs.readdirSync(marks)).toEqual([]);
    });
  });
});
