import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryIo } from '../../src/context.js';
import { addWorktree } from '../../src/git/worktree.js';
import { createRun, ensureLedger, openLedger, readRun, updateState } from '../../src/ledger/index.js';
import { showDiff } from '../../src/review/diff.js';
import { liveChanges, maskedPaths, SANDBOX_MASKS } from '../../src/review/live.js';
import { exportChanges } from '../../src/run/end/finalize-changes.js';
import { commandDirName } from '../../src/slash/index.js';
import { LiveDiffs } from '../../src/web/live-diff.js';
import { GIT_ENV, gitRepo, snapshotTree, tempDir } from '../helpers/git-repo.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * The live diff of an ACTIVE fix run (src/review/live.ts, src/git/live-diff.ts): the worktree's
 * changes as changes.patch will hold them, made without touching the worktree or its index, and
 * inert to whatever the agent planted in it (each plant touches a marker file when it runs).
 */

const env = { ...process.env, ...GIT_ENV } as Record<string, string>;
const plain = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

afterEach(() => vi.restoreAllMocks());

/** A repository, an ACTIVE fix run in a worktree of it, and a folder for markers. */
async function activeRun() {
  const repo = gitRepo({ files: { 'a.txt': 'one\n', '.gitignore': 'node_modules/\n.agentbox-run/\n' } });
  ensureLedger(repo.dir);
  const ledger = openLedger(repo.dir);
  const base = repo.git('rev-parse', 'HEAD').trim();
  const handle = await createRun(ledger, {
    type: 'fix',
    task: 'fix',
    envelope: ENVELOPE,
    repoShaStart: base,
  });
  const wt = path.join(tempDir('agentbox-wt-'), 'wt');
  await addWorktree(repo.dir, { path: wt, branch: `agentbox/${handle.meta.run_name}`, base });
  await updateState(ledger, handle, { status: 'ACTIVE', worktree_path: wt });
  const marks = tempDir('agentbox-marks-');
  const run = () => readRun(ledger, handle.name);
  return { repo, ledger, base, handle, wt, marks, run };
}

/** A git dir whose config runs `marker`'s plant from every place git might run a command. */
function evilGitDir(dir: string, marks: string, tag: string): string {
  plain(path.dirname(dir), 'init', '-q', '--separate-git-dir', dir, fs.mkdtempSync(`${dir}-wt`));
  const plant = `touch ${marks}/${tag}; false`;
  for (const [key, value] of [
    ['core.fsmonitor', plant],
    ['filter.x.clean', plant],
    ['filter.x.smudge', plant],
    ['filter.x.required', 'false'],
    ['diff.x.textconv', plant],
    ['diff.x.command', plant],
    ['diff.external', plant],
    ['core.pager', plant],
  ])
    plain(dir, '--git-dir', dir, 'config', key!, value!);
  fs.mkdirSync(path.join(dir, 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'hooks', 'post-index-change'), `#!/bin/sh\n${plant}\n`, { mode: 0o755 });
  return dir;
}

describe('the live diff of an ACTIVE fix run', () => {
  it('is what changes.patch will hold: tracked and new files, the same exclusions; nothing in the worktree changes', async () => {
    const { repo, ledger, base, handle, wt, run } = await activeRun();
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
    fs.mkdirSync(path.join(wt, '.agentbox-run'));
    fs.writeFileSync(path.join(wt, '.agentbox-run', 'notes.md'), 'mine\n');
    const slash = path.join(wt, '.claude', 'commands', commandDirName(handle.meta.run_id));
    fs.mkdirSync(slash, { recursive: true });
    fs.writeFileSync(path.join(slash, 'x.md'), 'run command\n');
    plain(wt, 'init', '-q', 'inner');
    fs.writeFileSync(path.join(wt, 'inner', 'f.txt'), 'x\n');
    // A package with its own .git in the ignored node_modules/: the end sets it aside and leaves
    // it out (git then names node_modules as ignored, which once failed the export).
    fs.mkdirSync(path.join(wt, 'node_modules'));
    plain(path.join(wt, 'node_modules'), 'init', '-q', 'pkg');
    fs.writeFileSync(path.join(wt, 'node_modules', 'pkg', 'index.js'), 'x\n');
    const index = path.join(repo.dir, '.git', 'worktrees', 'wt', 'index');
    const indexBefore = fs.readFileSync(index);
    const treeBefore = snapshotTree(wt);
    const walked: string[] = [];
    const readdir = fs.readdirSync;
    vi.spyOn(fs, 'readdirSync').mockImplementation(((p: fs.PathLike, o?: unknown) => {
      walked.push(String(p));
      return (readdir as (p: fs.PathLike, o?: unknown) => unknown)(p, o);
    }) as typeof fs.readdirSync);
    const live = await liveChanges(repo.dir, run(), env);
    vi.restoreAllMocks();
    expect(live?.in_progress).toBe(true);
    expect(live?.files.map((f) => [f.path, f.status])).toEqual([
      ['a.txt', 'modified'],
      ['new.txt', 'added'],
    ]);
    // The ignored node_modules/ is not walked; the worktree and its index are as they were.
    expect(walked.filter((p) => p.includes('node_modules'))).toEqual([]);
    expect(walked.some((p) => p.endsWith('/wt'))).toBe(true);
    expect(fs.readFileSync(index).equals(indexBefore)).toBe(true);
    expect(snapshotTree(wt)).toEqual(treeBefore);
    // The tree and the new blobs are in the diff's own objects, not in the main repository.
    const objects = { ...env, ...live!.objects };
    const tree = (...args: string[]) =>
      execFileSync('git', args, { cwd: repo.dir, env: objects, encoding: 'utf8' });
    expect(tree('diff', '--stat', base, live!.tree)).toContain('new.txt');
    expect(() => plain(repo.dir, 'cat-file', '-e', live!.tree)).toThrow();
    live!.dispose();
    expect(fs.existsSync(live!.objects.GIT_OBJECT_DIRECTORY!)).toBe(false);
    // The run's end exports the very same patch.
    const done = await exportChanges({ ledger, meta: handle.meta, runDir: handle.dir, worktree: wt });
    expect(done.error).toBeUndefined();
    expect(done.changes?.patch.equals(live!.patch)).toBe(true);
  });

  it('agentbox diff marks it in progress: a header on a terminal, a line with --stat, stderr when piped, --json', async () => {
    const { repo, wt, run } = await activeRun();
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
    const ctx = (isTTY: boolean) => ({
      cwd: repo.dir,
      env: { ...env, GIT_PAGER: 'cat' },
      io: memoryIo({ isTTY }),
    });
    const piped = ctx(false);
    await showDiff(piped, repo.dir, run(), {});
    expect(piped.io.stdout).toMatch(/^diff --git a\/a.txt b\/a.txt\n[\s\S]*\+two\n[\s\S]*b\/new.txt/);
    expect(piped.io.stderr).toMatch(
      /^in progress: .* is ACTIVE — its worktree's changes so far against [0-9a-f]{12} \(2 files\)/,
    );
    const stat = ctx(false);
    await showDiff(stat, repo.dir, run(), { stat: true });
    expect(stat.io.stdout).toMatch(/a.txt +\| 2 \+-\n new.txt \| 1 \+\n.*\nin progress: /);
    const tty = ctx(true);
    await showDiff(tty, repo.dir, run(), { pager: false, color: 'never' });
    expect(tty.io.stdout).toMatch(/^in progress: .*\ndiff --git a\/a.txt/);
    const json = ctx(false);
    await showDiff(json, repo.dir, run(), { json: true });
    const data = JSON.parse(json.io.stdout);
    expect(data).toMatchObject({ in_progress: true, files: [{ path: 'a.txt' }, { path: 'new.txt' }] });
    expect(data.patch).toContain('+new');
    fs.rmSync(wt, { recursive: true, force: true });
    await expect(showDiff(ctx(false), repo.dir, run(), {})).rejects.toThrow(
      /is ACTIVE but its worktree is gone: .*wt/,
    );
  });

  it('runs nothing the agent planted: a .git file, link or folder naming its own config, a nested repository, attributes', async () => {
    const { repo, wt, marks, run } = await activeRun();
    const runDir = tempDir('agentbox-evil-');
    fs.writeFileSync(path.join(wt, '.gitattributes'), '* filter=x diff=x\n');
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
    // A driver of the same name in the main repository's config: only a tree diff in the main
    // checkout (its own attributes) may name it, never the agent's .gitattributes.
    repo.git('config', 'diff.x.textconv', `touch ${marks}/main-textconv; false`);
    plain(wt, 'init', '-q', 'inner');
    plain(path.join(wt, 'inner'), 'config', 'core.fsmonitor', `touch ${marks}/nested-fsmonitor; false`);
    fs.writeFileSync(path.join(wt, 'inner', 'f.txt'), 'x\n');
    const spellings: [string, () => void][] = [
      [
        'absolute gitdir',
        () =>
          fs.writeFileSync(
            path.join(wt, '.git'),
            `gitdir: ${evilGitDir(path.join(runDir, 'abs'), marks, 'abs')}\n`,
          ),
      ],
      [
        'relative gitdir',
        () => {
          evilGitDir(path.join(wt, '.evil'), marks, 'rel');
          fs.writeFileSync(path.join(wt, '.git'), 'gitdir: .evil\n');
        },
      ],
      [
        'symlink',
        () => fs.symlinkSync(evilGitDir(path.join(runDir, 'link'), marks, 'link'), path.join(wt, '.git')),
      ],
      [
        'folder',
        () =>
          fs.cpSync(evilGitDir(path.join(runDir, 'dir'), marks, 'dir'), path.join(wt, '.git'), {
            recursive: true,
          }),
      ],
    ];
    const io = () => ({ cwd: repo.dir, env: { ...env, GIT_PAGER: 'cat' }, io: memoryIo({ isTTY: false }) });
    for (const [label, plantIt] of spellings) {
      fs.rmSync(path.join(wt, '.git'), { recursive: true, force: true });
      plantIt();
      const live = await liveChanges(repo.dir, run(), env);
      expect(
        live?.files.map((f) => f.path),
        label,
      ).toEqual(expect.arrayContaining(['a.txt', 'new.txt']));
      live?.dispose();
      await showDiff(io(), repo.dir, run(), {});
      await showDiff(io(), repo.dir, run(), { stat: true });
      expect(fs.readdirSync(marks), label).toEqual([]);
    }
    // The plants work: the same git, pointed at the worktree as a person's git would be.
    plain(wt, 'status');
    plain(wt, 'add', '-A', '--', 'new.txt');
    expect(fs.readdirSync(marks).length).toBeGreaterThan(0);
  });

  it("on a terminal, git runs inert: an external diff from the environment does not run; the pager is the person's", async () => {
    const { repo, wt, marks, run } = await activeRun();
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    const planted = {
      GIT_EXTERNAL_DIFF: `${path.join(marks, 'x.sh')}`,
      GIT_CONFIG_PARAMETERS: `'diff.external=${path.join(marks, 'x.sh')}'`,
      GIT_PAGER: `cat > ${marks}/paged`,
    };
    fs.writeFileSync(path.join(marks, 'x.sh'), `#!/bin/sh\ntouch ${marks}/external\n`, { mode: 0o755 });
    const ctx = { cwd: repo.dir, env: { ...env, ...planted }, io: memoryIo({ isTTY: true }) };
    await showDiff(ctx, repo.dir, run(), {});
    // The external diff named only in the environment does not run; the person's pager does, given git's diff.
    expect(fs.readdirSync(marks).sort()).toEqual(['paged', 'x.sh']);
    const paged = fs.readFileSync(path.join(marks, 'paged'), 'utf8');
    expect(paged.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/-one\n.*\+two\n/s);
    expect(ctx.io.stdout).toMatch(/^in progress: /);
  });
});

describe('the web route', () => {
  it('answers in_progress, diffs again only when the stream grew and a second has passed, then the final patch', async () => {
    const { repo, ledger, handle, wt } = await activeRun();
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    let now = 0;
    const diffs = new LiveDiffs(() => now, 1000);
    const first = await diffs.answer(ledger, repo.dir, handle.name, env);
    expect(first).toMatchObject({ in_progress: true, too_large: false, files: [{ path: 'a.txt' }] });
    fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
    now = 5000;
    expect(await diffs.answer(ledger, repo.dir, handle.name, env)).toBe(first); // the stream did not grow
    const stream = path.join(handle.dir, 'raw', 'stream.jsonl');
    fs.mkdirSync(path.dirname(stream), { recursive: true });
    fs.appendFileSync(stream, '{"type":"user"}\n');
    now = 5500;
    const second = await diffs.answer(ledger, repo.dir, handle.name, env);
    expect(second.files.map((f) => f.path)).toEqual(['a.txt', 'new.txt']);
    fs.appendFileSync(stream, '{"type":"user"}\n');
    now = 5900; // grown, but within the second
    expect(await diffs.answer(ledger, repo.dir, handle.name, env)).toBe(second);
    fs.writeFileSync(path.join(handle.dir, 'changes.patch'), second.patch!);
    await updateState(ledger, handle, { status: 'REVIEW' });
    const done = await diffs.answer(ledger, repo.dir, handle.name, env);
    expect(done).toMatchObject({ in_progress: false, patch: second.patch, files: second.files });
    expect(done.stat).toMatch(/^ a\.txt +\| +2 \+-\n new\.txt +\| +1 \+\n 2 files changed/);
  });

  it("a finished run's patch too large to send: its files and stat still are", async () => {
    const { repo, ledger, handle, wt } = await activeRun();
    fs.writeFileSync(path.join(wt, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(wt, 'big.txt'), 'x'.repeat(80).concat('\n').repeat(80_000));
    const live = await new LiveDiffs().answer(ledger, repo.dir, handle.name, env);
    expect(live).toMatchObject({ too_large: true, patch: null });
    await exportChanges({ ledger, meta: handle.meta, runDir: handle.dir, worktree: wt });
    await updateState(ledger, handle, { status: 'REVIEW' });
    const done = await new LiveDiffs().answer(ledger, repo.dir, handle.name, env);
    expect(done).toMatchObject({ in_progress: false, too_large: true, patch: null, files: live.files });
    expect(done.stat).toContain(' 2 files changed, 80001 insertions(+), 1 deletion(-)');
  });
});

describe('maskedPaths: what the sandbox may be masking, left out of a live diff', () => {
  it('an empty mask or an absent one is left out (the sandbox may make it mid-scan); real content and a tracked deletion are shown', () => {
    const dir = tempDir('agentbox-masks-');
    fs.writeFileSync(path.join(dir, '.bashrc'), '');
    fs.mkdirSync(path.join(dir, '.vscode'));
    fs.writeFileSync(path.join(dir, '.mcp.json'), '{"mcpServers":{}}\n');
    fs.mkdirSync(path.join(dir, '.idea'));
    fs.writeFileSync(path.join(dir, '.idea', 'workspace.xml'), '<project/>\n');
    const masks = maskedPaths(dir, new Set(['.gitmodules']));
    expect(masks).toContain('.bashrc');
    expect(masks).toContain('.vscode');
    expect(masks).toContain('.zshrc');
    expect(masks).not.toContain('.mcp.json');
    expect(masks).not.toContain('.idea');
    expect(masks).not.toContain('.gitmodules');
    expect(masks).toHaveLength(SANDBOX_MASKS.length - 3);
  });
});

describe('the live diff of a run that names a folder not its own', () => {
  it('stages nothing there: a planted ACTIVE run naming another folder (the home, the checkout) is refused', async () => {
    const { repo, ledger, handle, run } = await activeRun();
    const elsewhere = tempDir('agentbox-not-a-worktree-');
    fs.writeFileSync(path.join(elsewhere, 'private.txt'), 'mine\n');
    for (const folder of [elsewhere, repo.dir]) {
      await updateState(ledger, handle, { worktree_path: folder });
      const before = snapshotTree(folder);
      await expect(liveChanges(repo.dir, run())).rejects.toThrow(/which is not its own/);
      expect(snapshotTree(folder)).toEqual(before);
    }
  });
});
