import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readable } from '../../src/sandbox/read-allowlist.js';
import { runGitconfigText, writeRunGitconfig } from '../../src/sandbox/run-gitconfig.js';
import {
  agentboxInstall,
  carveTo,
  holdingPackages,
  inSystem,
  SYSTEM_TOP,
  selfGlob,
  toolchainOf,
  topRegions,
} from '../../src/sandbox/top-fence.js';
import { gitRepo } from '../helpers/git-repo.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the top of the file system (issue 37: a run reads the system, nothing else of /)', () => {
  it('denies every top-level folder but the system’s and the kernel’s, on Linux only', () => {
    const children = ['bin', 'etc', 'home', 'lib', 'lib64', 'opt', 'proc', 'root', 'run', 'srv', 'sys'];
    const more = ['tmp', 'usr', 'var', 'work', 'dev', 'nix', 'snap', 'mnt', 'data.img'];
    expect(topRegions([...children, ...more], 'linux')).toEqual([
      '/home',
      '/root',
      '/run',
      '/srv',
      '/tmp',
      '/var',
      '/work',
      '/mnt',
      '/data.img',
    ]);
    expect(topRegions(children, 'darwin')).toEqual([]);
  });

  it.each([
    ['/usr/share/data', true],
    ['/lib64', true],
    ['/proc/self', true],
    ['/srv/data', false],
    ['/usrx', false],
  ])('a top-level link resolving to %s is in the system: %s', (real, expected) => {
    expect(inSystem(real)).toBe(expected);
  });

  it.each([
    ['/root/.pyenv/shims', '/root/.pyenv'],
    ['/root/.pyenv/plugins/pyenv-virtualenv/shims', '/root/.pyenv'],
    ['/home/b/.cargo/bin', '/home/b/.cargo/bin'],
    ['/home/b/.nvm/versions/node/v20/bin', '/home/b/.nvm'],
    ['/srv/b/sdk/bin', null], // a plain name of the table (`sdk`) could be any folder
    ['/srv/b/node_modules/.bin', null],
  ])('the toolchain of PATH folder %s: %s', (dir, expected) => {
    expect(toolchainOf(dir, ['.nvm', '.pyenv', '.cargo/bin', 'sdk'])).toBe(expected);
  });
});

describe("a run's fence outside the home (real folders)", () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'top-fence-')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'home');
  const other = path.join(dir, 'otherhome');
  for (const rel of ['home/.npm', 'otherhome/.pyenv/shims', 'otherhome/.pyenv/versions/3/bin', 'tmp'])
    fs.mkdirSync(path.join(dir, rel), { recursive: true });
  fs.writeFileSync(path.join(other, '.netrc'), 'x');
  fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Ada Person\n\temail = ada@example.com\n');
  const env = {
    HOME: home,
    PATH: `${path.join(other, '.pyenv', 'shims')}:/usr/bin`,
    TMPDIR: path.join(dir, 'tmp'),
  };
  const config = { mode: 'required' as const, allowed_domains: [], deny_read: [], allow_read: [] };

  it.runIf(process.platform === 'linux')(
    'a fix run: denies the other top-level folders and the rest of /tmp; opens the system, the run’s places, the PATH toolchain, agentbox; gives git its own config',
    async () => {
      const { prepareRunPrivacy } = await import('../../src/sandbox/prepare.js');
      const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
      // The identity is the person's global one here (the helper sets one in the repository).
      repo.git('config', '--unset', 'user.name');
      repo.git('config', '--unset', 'user.email');
      const worktree = path.join(home, '.local', 'share', 'agentbox', 'worktrees', 'r-1', 'fix-a');
      fs.mkdirSync(path.dirname(worktree), { recursive: true });
      repo.git('worktree', 'add', '-q', '-b', 'agentbox/fix-a', worktree);
      // Another folder beside the repository (a session's /tmp/claude-<uid>, another repository).
      const sibling = fs.realpathSync(fs.mkdtempSync(path.join(path.dirname(repo.dir), 'sibling-')));
      const privacy = await prepareRunPrivacy({
        env,
        runName: 'fix-a',
        repoRoot: fs.realpathSync(repo.dir),
        worktree,
        fenced: true,
        config,
      });
      try {
        const box = privacy.sandbox!;
        const can = (p: string) => readable(box, p);
        for (const top of fs.readdirSync('/').filter((c) => !['proc', 'dev', 'sys'].includes(c))) {
          const real = fs.realpathSync(`/${top}`);
          if (!SYSTEM_TOP.includes(top) && real === `/${top}`) expect(box.denyRead, top).toContain(`/${top}`);
        }
        expect(box.listed).toEqual([]);
        expect(can('/usr/bin/git')).toBe(true);
        expect(can('/etc/passwd')).toBe(true);
        expect(can(path.join(sibling, 'x'))).toBe(false);
        expect(can('/var/tmp/other-repo/x')).toBe(false);
        expect(can(path.join(worktree, 'a.txt'))).toBe(true);
        expect(can(path.join(privacy.area.tmpDir, 'x'))).toBe(true);
        // A pyenv shim on PATH in another home runs the versions beside it: that toolchain opens.
        expect(can(path.join(other, '.pyenv', 'versions', '3', 'bin', 'python'))).toBe(true);
        expect(can(path.join(other, '.netrc'))).toBe(false);
        // agentbox itself, so that an agentbox started in the run refuses the gate and logs it.
        expect(can(path.join(ROOT, 'bin', 'agentbox.cjs'))).toBe(true);
        // The person's git config is denied; the run's own carries their identity, nothing else.
        expect(can(path.join(home, '.gitconfig'))).toBe(false);
        expect(can(box.gitConfig)).toBe(true);
        const got = (key: string) =>
          execFileSync('git', ['config', '--file', box.gitConfig, '--get', key], { encoding: 'utf8' }).trim();
        expect(got('user.name')).toBe('Ada Person');
        expect(got('user.email')).toBe('ada@example.com');
      } finally {
        privacy.area.dispose();
        repo.cleanup();
        fs.rmSync(sibling, { recursive: true, force: true });
      }
    },
  );
});

describe("a read-only run's fence around its repository (real folders)", () => {
  it.runIf(process.platform === 'linux')(
    'lists the home around a repository in it entry by entry; a temp folder stays open but for Claude Code’s',
    async () => {
      const { prepareRunPrivacy } = await import('../../src/sandbox/prepare.js');
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'top-carve-')));
      const home = path.join(dir, 'home');
      const root = path.join(home, 'code', 'x');
      fs.mkdirSync(path.join(home, 'code', 'y'), { recursive: true });
      fs.writeFileSync(path.join(home, 'code', 'y', 'secret'), 'x');
      fs.mkdirSync(root, { recursive: true });
      execFileSync('git', ['init', '-q', root]);
      const config = { mode: 'required' as const, allowed_domains: [], deny_read: [], allow_read: [] };
      const env = { HOME: home, PATH: '/usr/bin', TMPDIR: path.join(dir, 'tmp') };
      fs.mkdirSync(env.TMPDIR);
      const privacy = await prepareRunPrivacy({
        env,
        runName: 'scout-c',
        repoRoot: root,
        worktree: null,
        fenced: true,
        config,
      });
      try {
        const box = privacy.sandbox!;
        const can = (p: string) => readable(box, p);
        expect(box.denyRead).not.toContain(home);
        expect(box.denyRead).not.toContain('/tmp');
        expect(box.listed).toContain(path.join(home, 'code', 'y'));
        expect(can(path.join(home, 'code', 'y', 'secret'))).toBe(false);
        expect(can(path.join(root, 'a.txt'))).toBe(true);
        const claude = `/tmp/claude-${process.getuid!()}`;
        if (fs.existsSync(claude)) expect(can(path.join(claude, 'x'))).toBe(false);
        expect(can('/srv/x')).toBe(!fs.existsSync('/srv'));
      } finally {
        privacy.area.dispose();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('carveTo (no denied folder around where a read-only run starts)', () => {
  const tree: Record<string, string[]> = {
    '/tmp': ['a', 'repo', 'link-out', 'link-in', 'gone'],
    '/h': ['.npm', 'code'],
    '/h/code': ['x', 'y'],
  };
  const links: Record<string, string | null> = {
    '/tmp/link-out': '/usr/lib',
    '/tmp/link-in': '/tmp/a',
    '/tmp/gone': null,
  };
  const real = (p: string) => (p in links ? links[p]! : p);
  const list = (dir: string) => tree[dir] ?? [];
  it('lists the region’s entries but the way down, by real path, links out of it left out', () => {
    expect(carveTo(['/tmp', '/h/.ssh', '/tmp/repo/.agents'], '/tmp/repo', list, real)).toEqual([
      '/tmp/a',
      '/h/.ssh',
      '/tmp/repo/.agents',
    ]);
    expect(carveTo(['/h'], '/h/code/x', list, real)).toEqual(['/h/.npm', '/h/code/y']);
    expect(carveTo(['/srv'], '/tmp/repo', list, real)).toEqual(['/srv']);
  });
});

describe("the run's git config", () => {
  it('keeps only the identity and line endings, quoted so git reads them back as they were', () => {
    const text = runGitconfigText({
      'user.name': 'A "quoted" \\ name\n[url "x"]',
      'user.email': 'a@b',
      'url.https://tok@h/.insteadOf': 'https://h/',
    } as Record<string, string>);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-gitconfig-'));
    try {
      const file = path.join(dir, 'c');
      fs.writeFileSync(file, text);
      const list = execFileSync('git', ['config', '--file', file, '--list'], { encoding: 'utf8' });
      expect(list).toBe('user.name=A "quoted" \\ name[url "x"]\nuser.email=a@b\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the values as git resolves them for the repository, none of the rest', async () => {
    const repo = gitRepo();
    repo.git('config', '--unset', 'user.email');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-gitconfig-'));
    try {
      const global = path.join(dir, 'global');
      fs.writeFileSync(
        global,
        '[user]\n\temail = me@example.com\n[url "https://x-token:SECRET@example.com/"]\n\tinsteadOf = https://example.com/\n[http]\n\textraHeader = Authorization: Bearer SECRET\n',
      );
      const file = await writeRunGitconfig(dir, repo.dir, {
        PATH: process.env.PATH,
        GIT_CONFIG_GLOBAL: global,
      });
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toContain('me@example.com');
      expect(text).not.toContain('SECRET');
      expect(fs.statSync(file).mode & 0o077).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      repo.cleanup();
    }
  });
});

describe('selfGlob (a listed entry that may be gone when a command starts)', () => {
  it.each([
    ['/tmp/abc', '/tmp/[a]bc'],
    ['/tmp/.x', '/tmp/[.]x'],
    ['/tmp/a*b', '/tmp/a*b'],
    ['/tmp/[x]', '/tmp/[x]'],
  ])('%s → %s', (p, glob) => {
    expect(selfGlob(p)).toBe(glob);
  });
});

describe("agentbox's installation, opened to a run", () => {
  it('its folder, its own packages and, when it was installed into a node_modules (npm, pnpm), the folder its dependencies lie in', () => {
    expect(agentboxInstall('/p/node_modules/agentbox')).toEqual([
      '/p/node_modules/agentbox',
      '/p/node_modules/agentbox/node_modules',
      '/p/node_modules',
    ]);
    expect(holdingPackages('/p/node_modules/@scope/agentbox/')).toEqual(['/p/node_modules']);
    expect(holdingPackages('/p/.pnpm/agentbox@0.1.0/node_modules/agentbox')).toEqual([
      '/p/.pnpm/agentbox@0.1.0/node_modules',
    ]);
    // A checkout, or a global install's own folder: nothing beside it.
    expect(holdingPackages('/work/agentbox')).toEqual([]);
    expect(holdingPackages('/usr/lib/node_modules/agentbox')).toEqual(['/usr/lib/node_modules']);
  });
});
