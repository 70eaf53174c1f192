import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanupLater } from './cleanup.js';

/** Environment for git in tests: no user or system config, fixed identity and dates. */
export const GIT_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Agentbox Test',
  GIT_AUTHOR_EMAIL: 'test@agentbox.invalid',
  GIT_COMMITTER_NAME: 'Agentbox Test',
  GIT_COMMITTER_EMAIL: 'test@agentbox.invalid',
  GIT_TERMINAL_PROMPT: '0',
};

export interface TestRepo {
  /** Real path of the repository's root (symlinks resolved, as git reports it). */
  readonly dir: string;
  git(...args: string[]): string;
  write(file: string, content: string | Buffer): void;
  read(file: string): string;
  exists(file: string): boolean;
  commit(message: string): string;
  cleanup(): void;
}

/** A fresh folder under the system temp dir, removed when the test (or, outside one, the file) ends. */
export function tempDir(prefix = 'agentbox-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  cleanupLater(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A real git repository in a temp folder with one commit (README.md), fixed identity and
 * `main` as the branch. `files` are written and committed in that first commit.
 */
export function gitRepo(options: { files?: Record<string, string>; bare?: boolean } = {}): TestRepo {
  const dir = tempDir('agentbox-repo-');
  const env = { ...process.env, ...GIT_ENV };
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '--quiet', ...(options.bare ? ['--bare'] : []), '--initial-branch=main');
  // No background gc or maintenance: a detached `git gc` could outlive the test and its folder.
  git('config', 'gc.auto', '0');
  git('config', 'maintenance.auto', 'false');
  if (!options.bare) {
    git('config', 'user.name', GIT_ENV.GIT_AUTHOR_NAME!);
    git('config', 'user.email', GIT_ENV.GIT_AUTHOR_EMAIL!);
    git('config', 'commit.gpgsign', 'false');
    const files = { 'README.md': '# test repo\n', ...options.files };
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), content);
    }
    git('add', '-A');
    git('commit', '--quiet', '-m', 'initial');
  }
  return testRepoAt(dir, git, () => fs.rmSync(dir, { recursive: true, force: true }));
}

/** The TestRepo over a checkout at `dir` (a fresh repo, a clone), its git runner and its removal. */
export function testRepoAt(dir: string, git: (...args: string[]) => string, cleanup: () => void): TestRepo {
  return {
    dir,
    git,
    write(file, content) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), content);
    },
    read: (file) => fs.readFileSync(path.join(dir, file), 'utf8'),
    exists: (file) => fs.existsSync(path.join(dir, file)),
    commit(message) {
      git('add', '-A');
      git('commit', '--quiet', '-m', message);
      return git('rev-parse', 'HEAD').trim();
    },
    cleanup,
  };
}

/**
 * Every file under `dir` with its bytes, for "nothing changed on disk" assertions. By default
 * without `.git` and the ledger's derived `.agents/cache/`, which any reader may (re)write.
 */
export function snapshotTree(dir: string, options: { skip?: string[] } = {}): Map<string, string> {
  const skip = new Set(options.skip ?? ['.git', '.agents/cache']);
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (skip.has(relPath)) continue;
      const full = path.join(dir, relPath);
      if (entry.isDirectory()) {
        out.set(`${relPath}/`, `dir ${fs.statSync(full).mode.toString(8)}`);
        walk(relPath);
      } else if (entry.isSymbolicLink()) {
        out.set(relPath, `link ${fs.readlinkSync(full)}`);
      } else {
        out.set(relPath, fs.readFileSync(full).toString('base64'));
      }
    }
  };
  walk('');
  return out;
}
