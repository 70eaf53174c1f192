import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GIT_ENV, gitRepo, type TestRepo, tempDir, testRepoAt } from './git-repo.js';

/**
 * A team's git remote for tests: a bare repository playing `origin` with one commit on main, and
 * clones of it (each a runner or a laptop). Every folder is removed by `cleanup`.
 */
export interface Origin {
  readonly dir: string;
  /** A fresh clone with git's test identity; `setup` runs in it before it is returned. */
  clone(name: string): TestRepo;
  /** `git` in the bare repository. */
  git(...args: string[]): string;
  cleanup(): void;
}

export function origin(files: Record<string, string> = {}): Origin {
  const bare = gitRepo({ bare: true });
  const seed = gitRepo({ files });
  seed.git('push', '--quiet', bare.dir, 'main');
  seed.cleanup();
  const clones: string[] = [];
  const env = { ...process.env, ...GIT_ENV };
  return {
    dir: bare.dir,
    git: bare.git,
    clone(name) {
      const dir = path.join(tempDir(`agentbox-${name}-`), 'repo');
      clones.push(path.dirname(dir));
      execFileSync('git', ['clone', '--quiet', bare.dir, dir], { env, stdio: 'ignore' });
      const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      git('config', 'user.name', GIT_ENV.GIT_AUTHOR_NAME!);
      git('config', 'user.email', GIT_ENV.GIT_AUTHOR_EMAIL!);
      git('config', 'commit.gpgsign', 'false');
      return testRepoAt(dir, git, () => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
    },
    cleanup() {
      for (const dir of clones) fs.rmSync(dir, { recursive: true, force: true });
      bare.cleanup();
    },
  };
}
