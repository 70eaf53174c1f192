import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ignoredFolders, nestedGitIn, WALK_BUDGET } from '../../src/git/nested.js';
import { GIT_ENV, gitRepo, type TestRepo } from '../helpers/git-repo.js';

/**
 * The search for nested repositories at every turn's end (a checkpoint) and at the run's end walks
 * the worktree; a real project's worktree holds node_modules/ or target/, thousands of folders
 * walked while claude waited for its Stop. Past WALK_BUDGET folders the folders git ignores as a
 * whole are left out (src/git/nested.ts): git never enters them either.
 */
const repos: TestRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

function repoWith(folders: number): TestRepo {
  const repo = gitRepo({ files: { '.gitignore': 'node_modules/\n' } });
  repos.push(repo);
  for (let i = 0; i < folders; i++)
    fs.mkdirSync(path.join(repo.dir, 'node_modules', `p${i}`, 'lib'), { recursive: true });
  execFileSync('git', ['init', '-q', path.join(repo.dir, 'node_modules', 'p0', 'lib')], { env: GIT_ENV });
  execFileSync('git', ['init', '-q', path.join(repo.dir, 'inner')], { env: GIT_ENV });
  return repo;
}

describe('nestedGitIn', () => {
  it('a small worktree is walked whole, git not asked', async () => {
    const repo = repoWith(3);
    let asked = 0;
    const found = await nestedGitIn(repo.dir, async () => {
      asked++;
      return new Set();
    });
    expect(found.map((n) => n.path)).toEqual(['inner', 'node_modules/p0/lib']);
    expect(asked).toBe(0);
  });

  it(`past ${WALK_BUDGET} folders, what git ignores as a whole is left out: the repository in it too`, async () => {
    const repo = repoWith(WALK_BUDGET);
    let asked = 0;
    const found = await nestedGitIn(repo.dir, () => {
      asked++;
      return ignoredFolders({ cwd: repo.dir });
    });
    expect(found).toEqual([{ path: 'inner', kind: 'folder' }]);
    expect(asked).toBe(1);
  });

  it('when git cannot say what it ignores, everything is walked', async () => {
    const repo = repoWith(WALK_BUDGET);
    const found = await nestedGitIn(repo.dir, () => Promise.reject(new Error('git failed')));
    expect(found.map((n) => n.path)).toEqual(['inner', 'node_modules/p0/lib']);
  });
});
