import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOnDisk, findRepo } from '../../src/git/repo.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

function appendConfig(dir: string, text: string): string {
  fs.appendFileSync(path.join(dir, '.git/config'), text);
  return dir;
}

/** What git answers (no env: the fast path is off), to hold the disk reading against. */
const byGit = (cwd: string) => findRepo(cwd);

describe('findRepo reads the plain layouts from disk, as git would answer', () => {
  it('the root, a subfolder, and a linked worktree and its subfolder', async () => {
    const repo = gitRepo({ files: { 'src/a/b.txt': 'x\n' } });
    const wt = path.join(tempDir(), 'wt');
    repo.git('worktree', 'add', '-q', '-b', 'side', wt);
    try {
      for (const cwd of [repo.dir, path.join(repo.dir, 'src/a'), wt, path.join(wt, 'src/a')]) {
        const disk = findOnDisk(cwd);
        expect(disk, cwd).toBeDefined();
        expect(disk).toEqual(await byGit(cwd));
        expect(await findRepo(cwd, {})).toEqual(disk);
      }
    } finally {
      fs.rmSync(path.dirname(wt), { recursive: true, force: true });
    }
  });

  it.each([
    ['inside the .git folder', (dir: string) => path.join(dir, '.git', 'refs')],
    ['core.worktree set', (dir: string) => appendConfig(dir, '\tworktree = /tmp\n')],
    ['core.bare = true', (dir: string) => appendConfig(dir, '[core]\n\tbare = true\n')],
    [
      'a .git file pointing elsewhere (a submodule)',
      (dir: string) => {
        const sub = path.join(dir, 'sub');
        fs.mkdirSync(sub);
        fs.writeFileSync(path.join(sub, '.git'), `gitdir: ${path.join(dir, '.git')}\n`);
        return sub;
      },
    ],
  ])('%s: not read from disk, git decides', (_name, arrange) => {
    const repo = gitRepo();
    expect(findOnDisk(arrange(repo.dir))).toBeUndefined();
  });

  it('GIT_DIR in the environment: git decides, and answers the repository it names', async () => {
    const here = gitRepo();
    const named = gitRepo();
    const env = { ...process.env, GIT_DIR: path.join(named.dir, '.git') };
    const found = await findRepo(here.dir, env);
    expect(found.commonDir).toBe(path.join(named.dir, '.git'));
    expect(findOnDisk(here.dir)?.commonDir).toBe(path.join(here.dir, '.git'));
  });

  it('no repository above: undefined from disk, and findRepo says how to start one', async () => {
    const dir = tempDir();
    expect(findOnDisk(dir)).toBeUndefined();
    await expect(findRepo(dir, {})).rejects.toThrow(/not a git repository/);
  });
});
