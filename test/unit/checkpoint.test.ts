import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointRef, gitBusy, restoreCheckpoint, takeCheckpoint } from '../../src/git/checkpoint.js';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { recoveryAttempts, streamEndsWhole } from '../../src/recover/facts.js';
import { gitRepo, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
async function worktree(): Promise<{ repo: TestRepo; wt: string }> {
  const repo = gitRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'keep/c.txt': 'c\n' } });
  const dir = tempDir();
  const wt = path.join(dir, 'wt');
  await addWorktree(repo.dir, { path: wt, branch: 'agentbox/run', base: (await headSha(repo.dir))! });
  return { repo, wt };
}

describe('worktree checkpoints', () => {
  it('snapshot every file without touching the branch, the index or the files; restore puts all back', async () => {
    const { repo, wt } = await worktree();
    const w = (f: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(wt, f)), { recursive: true });
      fs.writeFileSync(path.join(wt, f), text);
    };
    // The state at the checkpoint: a commit of the agent's, an edit, a staged file, an untracked
    // file, a deletion, and the agent's own folder.
    w('a.txt', 'a committed\n');
    git(wt, 'commit', '-qam', 'agent commit');
    w('b.txt', 'b edited\n');
    w('staged.txt', 'staged\n');
    git(wt, 'add', 'staged.txt');
    w('new/untracked.txt', 'untracked\n');
    fs.rmSync(path.join(wt, 'keep/c.txt'));
    w('.agentbox-run/notes.md', 'notes\n');
    const head = git(wt, 'rev-parse', 'HEAD');
    const status = git(wt, 'status', '--porcelain');

    const point = await takeCheckpoint(wt, 'run', { exclude: ['.agentbox-run'] });
    expect(point.head).toBe(head);
    expect(git(wt, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(wt, 'status', '--porcelain')).toBe(status);
    expect(git(repo.dir, 'rev-parse', checkpointRef('run'))).toBe(point.commit);
    expect(git(wt, 'show', `${point.commit}:new/untracked.txt`)).toBe('untracked');
    expect(() => git(wt, 'show', `${point.commit}:.agentbox-run/notes.md`)).toThrow();
    // Files, not folders: git keeps no empty folder (keep/ lost its only file).
    const filesOf = () =>
      [...snapshotTree(wt, { skip: ['.git', '.agentbox-run'] })].filter(([f]) => !f.endsWith('/'));
    const files = filesOf();

    // What happens after: more commits, edits, new files, deletions, a lock left by a killed git.
    w('b.txt', 'b broken\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'half-done');
    w('a.txt', 'a broken\n');
    w('junk/file.txt', 'junk\n');
    fs.rmSync(path.join(wt, 'new/untracked.txt'));
    w('.agentbox-run/later.md', 'later\n');
    const gitDir = git(wt, 'rev-parse', '--absolute-git-dir');
    fs.writeFileSync(path.join(gitDir, 'index.lock'), '');
    expect(await gitBusy(wt)).toBe('git left index.lock behind');

    await restoreCheckpoint(wt, point, { keep: ['.agentbox-run'] });
    expect(filesOf()).toEqual(files);
    expect(git(wt, 'rev-parse', 'HEAD')).toBe(head);
    expect(await gitBusy(wt)).toBeNull();
    // The agent's own folder is kept whole.
    expect(fs.readdirSync(path.join(wt, '.agentbox-run')).sort()).toEqual(['later.md', 'notes.md']);
  });

  it('takes a same-size edit made in the second the index was written ("racy git"), whenever it is taken', async () => {
    const { wt } = await worktree();
    const gitDir = git(wt, 'rev-parse', '--absolute-git-dir');
    const sec = (t: number) => Math.floor(t / 1000);
    // The index written (a refresh), then a same-size edit within the same second: retried until so.
    for (let tries = 0; ; tries++) {
      fs.writeFileSync(path.join(wt, 'a.txt'), 'a\n');
      git(wt, 'update-index', '--refresh');
      git(wt, 'add', 'a.txt');
      fs.writeFileSync(path.join(wt, 'a.txt'), 'z\n');
      const index = fs.statSync(path.join(gitDir, 'index')).mtimeMs;
      if (sec(fs.statSync(path.join(wt, 'a.txt')).ctimeMs) === sec(index)) break;
      if (tries > 20) throw new Error('could not edit in the second the index was written');
    }
    // The checkpoint a second later: its copy of the index is newer than the edit.
    await new Promise((r) => setTimeout(r, 1100));
    const point = await takeCheckpoint(wt, 'run');
    fs.writeFileSync(path.join(wt, 'a.txt'), 'broken\n');
    await restoreCheckpoint(wt, point);
    expect(fs.readFileSync(path.join(wt, 'a.txt'), 'utf8')).toBe('z\n');
  });

  it('restores to the start commit when there is no checkpoint', async () => {
    const { repo, wt } = await worktree();
    const start = await headSha(repo.dir);
    fs.writeFileSync(path.join(wt, 'a.txt'), 'changed\n');
    fs.writeFileSync(path.join(wt, 'extra.txt'), 'extra\n');
    await restoreCheckpoint(wt, { commit: start!, head: start! });
    expect(git(wt, 'status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(wt, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it("a git failure is the runner's GIT_FAILED, naming the command and the worktree; git runs in the env passed", async () => {
    const { wt } = await worktree();
    const env = { ...process.env, GIT_DIR: path.join(wt, 'not-a-git-dir') };
    await expect(takeCheckpoint(wt, 'run', { env })).rejects.toMatchObject({
      code: 'GIT_FAILED',
      args: ['rev-parse', '--absolute-git-dir', '--verify', 'HEAD'],
      message: expect.stringContaining(`failed in ${wt}: fatal: not a git repository`),
      hint: `run "git -C ${wt} status" to see the state of the worktree`,
    });
    expect(await gitBusy(wt, env)).toBe('it is not a git worktree any more');
    expect(await gitBusy(wt)).toBeNull();
  });
});

describe('recovery facts from files', () => {
  it('a stream log is whole when it ends in a newline after a line that parses', () => {
    const dir = tempDir();
    const file = path.join(dir, 'stream.jsonl');
    expect(streamEndsWhole(file)).toBe(true);
    fs.writeFileSync(file, '');
    expect(streamEndsWhole(file)).toBe(true);
    fs.writeFileSync(file, '{"type":"system"}\n{"type":"assistant"}\n');
    expect(streamEndsWhole(file)).toBe(true);
    fs.appendFileSync(file, '{"type":"assis');
    expect(streamEndsWhole(file)).toBe(false);
    fs.appendFileSync(file, '\n');
    expect(streamEndsWhole(file)).toBe(false);
  });

  it('counts the recoveries that resumed or replayed a run', () => {
    const dir = tempDir();
    const events = [
      { event: 'recover', action: 'resume' },
      { event: 'recover', action: 'keep_waiting' },
      { event: 'Stop', decision: 'recover' },
      { event: 'recover', action: 'rollback_replay' },
    ];
    fs.writeFileSync(
      path.join(dir, 'events.jsonl'),
      `${events.map((e) => JSON.stringify(e)).join('\n')}\n{"event":"rec`,
    );
    expect(recoveryAttempts(dir)).toBe(2);
    expect(recoveryAttempts(path.join(dir, 'none'))).toBe(0);
  });
});
