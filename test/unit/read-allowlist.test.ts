import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type AirlockScope, judgeToolUse } from '../../src/airlock/guard.js';
import { hiddenReads, pathWords } from '../../src/sandbox/hidden-reads.js';
import {
  HOME_SECRETS,
  homePath,
  homeRegions,
  READ_ALLOWLIST,
  type ReadFence,
  readable,
  searchReachesDenied,
} from '../../src/sandbox/read-allowlist.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const FENCE: ReadFence = {
  denyRead: ['/home/u', '/home/u/.config/gh', '/tmp/agentbox-0', '/repo/.agents', '/home/u/.cache/deep'],
  allowRead: [
    '/home/u/.npm',
    '/home/u/.config',
    '/repo',
    '/tmp/agentbox-0/work/me/tmp',
    '/home/u/.cache/deep/own',
  ],
};

describe('readable (the sandbox runtime’s rule: the most specific entry decides, allow wins a tie)', () => {
  it.each([
    ['/usr/bin/node', true],
    ['/home/u', false],
    ['/home/u/.netrc', false],
    ['/home/u/.npm/_cacache/x', true],
    ['/home/u/.npmrc', false],
    ['/home/u/.config/git/config', true],
    ['/home/u/.config/gh/hosts.yml', false],
    ['/repo/src/a.ts', true],
    ['/repo/.agents/runs/x/report.md', false],
    ['/tmp/agentbox-0/work/sibling/git/config', false],
    ['/tmp/agentbox-0/work/me/tmp/x', true],
    ['/tmp/other', true],
    ['/home/u/.cache/deep/own/f', true],
    ['/home/u/.cache/deep/other/f', false],
  ])('%s → %s', (p, expected) => {
    expect(readable(FENCE, p)).toBe(expected);
  });
});

describe('searchReachesDenied (a search from above a denied region the rules cannot trim)', () => {
  it.each([
    ['/', true],
    ['/home', true],
    ['/tmp', true],
    ['/repo', false], // the ledger inside has its own Read rule
    ['/usr', false],
    ['/home/u/.npm', false],
    ['/home/u/.cache', true],
  ])('%s → %s', (dir, expected) => {
    expect(searchReachesDenied(FENCE, dir)).toBe(expected);
  });

  it('a denial with an opening inside it (the worktrees around the own one) counts, even inside an opened path', () => {
    const fence = { denyRead: ['/repo/wt'], allowRead: ['/repo', '/repo/wt/fix-a'] };
    expect(searchReachesDenied(fence, '/repo')).toBe(true);
    expect(searchReachesDenied(fence, '/repo/wt/fix-a')).toBe(false);
    expect(searchReachesDenied({ denyRead: ['/repo/secret'], allowRead: ['/repo'] }, '/repo')).toBe(false);
  });
});

describe('the home’s places', () => {
  it('follow the XDG folders when set; the regions are the home, the config dir and those folders', () => {
    const env = { HOME: '/h', XDG_CACHE_HOME: '/c', CLAUDE_CONFIG_DIR: '/cc' };
    expect(homePath('.cache/pip', env)).toBe('/c/pip');
    expect(homePath('.cache', env)).toBe('/c');
    expect(homePath('.cachex', env)).toBe('/h/.cachex');
    expect(homePath('.npm', env)).toBe('/h/.npm');
    expect(homePath('.config/git/config', env)).toBe('/h/.config/git/config');
    expect(homeRegions(env)).toEqual(['/h', '/cc', '/c']);
    expect(homeRegions({ HOME: '/h', XDG_DATA_HOME: 'relative' })).toEqual(['/h']);
    expect(homeRegions({ HOME: '/', CLAUDE_CONFIG_DIR: '/.claude' })).toEqual(['/.claude']);
  });

  it('the allowlist opens no credential: no row holds a HOME_SECRETS path, or is one', () => {
    for (const row of READ_ALLOWLIST)
      for (const secret of HOME_SECRETS) {
        expect(row.path === secret || row.path.startsWith(`${secret}/`), `${row.path} / ${secret}`).toBe(
          false,
        );
        expect(secret.startsWith(`${row.path}/`), `${row.path} holds ${secret}`).toBe(false);
      }
    expect(new Set(READ_ALLOWLIST.map((r) => r.path)).size).toBe(READ_ALLOWLIST.length);
  });

  it('docs/security.md quotes the table as it is in the code', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
    const block = /<!-- read-allowlist:start -->\n([\s\S]*?)<!-- read-allowlist:end -->/.exec(doc)?.[1] ?? '';
    const rows = block
      .trim()
      .split('\n')
      .slice(2)
      .map((line) => /^\| `~\/([^`]+)` \| (.*) \|$/.exec(line)?.slice(1));
    expect(rows).toEqual(READ_ALLOWLIST.map((r) => [r.path, r.for]));
  });
});

describe('hidden reads (the log of what the sandbox hid)', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hidden-reads-')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'home');
  const wt = path.join(home, 'wt');
  fs.mkdirSync(path.join(home, '.npm'), { recursive: true });
  fs.mkdirSync(wt, { recursive: true });
  fs.writeFileSync(path.join(home, '.netrc'), 'x');
  fs.writeFileSync(path.join(wt, 'a.txt'), 'x');
  fs.symlinkSync(path.join(home, '.netrc'), path.join(wt, 'link'));
  const fence: ReadFence = { denyRead: [home], allowRead: [wt, path.join(home, '.npm')] };

  it('takes the words of the command and of the lines reporting a failed read', () => {
    expect(pathWords(`python3 -c "print(open('/h/.netrc').read())"`, '')).toContain('/h/.netrc');
    expect(pathWords('cat x', 'cat: link: No such file or directory\nfine: /not/this')).toEqual([
      'cat',
      'x',
      'link',
      'No',
      'such',
      'file',
      'or',
      'directory',
    ]);
  });

  it.each([
    ['cat ~/.netrc', '', [path.join(home, '.netrc')]],
    ['cat $HOME/.netrc', '', [path.join(home, '.netrc')]],
    ['cat link', 'cat: link: No such file or directory', [path.join(home, '.netrc')]],
    ['sh script.sh', `open ${home}/.netrc: No such file or directory`, [path.join(home, '.netrc')]],
    [`git -C ${home} log`, '', [home]],
    ['cat a.txt ~/.npm', '', []],
    ['cat ~/.no-such-file', '', [path.join(home, '.no-such-file')]],
    ['echo x > ../escape.txt', '', [path.join(home, 'escape.txt')]],
    ['echo x > new/file.txt', '', []],
    ['ls /no/such/place', '', []],
    ['echo .netrc', '.netrc', []],
  ])('%s', (command, output, expected) => {
    expect(hiddenReads(fence, wt, home, command, output)).toEqual(expected);
  });
});

describe('the guard holds the read tools to the fence', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'guard-reads-')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'home');
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(path.join(home, '.npm'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(home, '.netrc'), 'x');
  fs.symlinkSync(path.join(home, '.netrc'), path.join(repo, 'link'));
  const scope: AirlockScope = {
    type: 'scout',
    repoRoot: repo,
    ledgerDir: path.join(repo, '.agents'),
    runDir: path.join(repo, '.agents', 'runs', 'r'),
    worktree: null,
    reads: { denyRead: [home, path.join(repo, '.agents')], allowRead: [repo, path.join(home, '.npm')] },
  };
  it.each([
    ['Read', { file_path: `${home}/.netrc` }, 'read-fence'],
    ['Read', { file_path: 'link' }, 'read-fence'],
    ['Read', { file_path: `${repo}/src/a.ts` }, null],
    ['Read', { file_path: `${home}/.npm/x` }, null],
    ['Grep', { pattern: 'x', path: home }, 'read-fence'],
    ['Grep', { pattern: 'x', path: '/' }, 'read-fence'],
    ['Grep', { pattern: 'x' }, null],
    ['Glob', { pattern: '**/*', path: dir }, 'read-fence'],
    ['Glob', { pattern: `${home}/**` }, 'read-fence'],
    ['Glob', { pattern: '../home/**' }, 'read-fence'],
    ['Glob', { pattern: 'src/**' }, null],
    ['LS', { path: home }, 'read-fence'],
  ])('%s %j → %s', (tool, input, rule) => {
    const verdict = judgeToolUse(scope, tool, input, repo);
    expect(verdict.allow ? null : verdict.rule).toBe(rule);
  });

  it('a Grep with a glob is refused where a hidden path’s name holds a glob character (Claude Code’s exclusion misses it: found by QA), allowed elsewhere', () => {
    const hidden = {
      ...scope,
      reads: {
        denyRead: [
          ...scope.reads!.denyRead,
          path.join(repo, 'web/[slug]/.env.local'),
          path.join(repo, 'prod.env'),
        ],
        allowRead: scope.reads!.allowRead,
      },
    };
    const grep = (input: Record<string, unknown>) => judgeToolUse(hidden, 'Grep', input, repo);
    const refused = grep({ pattern: 'SECRET', glob: '*' });
    expect(refused.allow ? null : [refused.rule, refused.reason]).toEqual([
      'read-fence',
      expect.stringContaining('web/[slug]/.env.local'),
    ]);
    expect(grep({ pattern: 'SECRET', glob: '*.ts', path: `${repo}/web` }).allow).toBe(false);
    // Without a glob (ripgrep keeps the ignore rules), or where no such name is below: allowed.
    expect(grep({ pattern: 'SECRET' }).allow).toBe(true);
    expect(grep({ pattern: 'SECRET', glob: '*', path: `${repo}/src` }).allow).toBe(true);
    expect(judgeToolUse(scope, 'Grep', { pattern: 'x', glob: '*' }, repo).allow).toBe(true);
  });

  it('a run without a sandbox is not held to a fence', () => {
    const { reads: _, ...open } = scope;
    expect(judgeToolUse(open, 'Read', { file_path: `${home}/.netrc` }, repo).allow).toBe(true);
  });
});

describe("a run's read fence, as prepareRunPrivacy builds it (real folders)", () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fence-prep-')));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'home');
  for (const rel of [
    '.npm',
    '.cargo/registry',
    '.cargo/bin',
    '.claude/projects',
    '.ssh',
    'bin',
    'opened/sub',
    '.config/gh',
  ])
    fs.mkdirSync(path.join(home, rel), { recursive: true });
  fs.writeFileSync(path.join(home, '.cargo', 'credentials.toml'), 'x');
  const env = {
    HOME: home,
    PATH: `${path.join(home, 'bin')}:${home}:/usr/bin`,
    TMPDIR: path.join(dir, 'tmp'),
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
  };
  fs.mkdirSync(env.TMPDIR);
  const config = {
    mode: 'required' as const,
    allowed_domains: [],
    deny_read: ['~/opened/sub'],
    allow_read: ['~/opened', '~/.config'],
  };

  it('denies the home and the run areas; opens the table, PATH folders in the home, allow_read and the run’s own; keeps credentials and deny_read shut', async () => {
    const { prepareRunPrivacy } = await import('../../src/sandbox/prepare.js');
    const { gitRepo } = await import('../helpers/git-repo.js');
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    const root = fs.realpathSync(repo.dir);
    const worktree = path.join(home, '.local', 'share', 'agentbox', 'worktrees', 'r-1', 'fix-a');
    fs.mkdirSync(path.dirname(worktree), { recursive: true });
    repo.git('worktree', 'add', '-q', '-b', 'agentbox/fix-a', worktree);
    const privacy = await prepareRunPrivacy({
      env,
      runName: 'fix-a',
      repoRoot: root,
      worktree,
      fenced: true,
      config,
    });
    try {
      const box = privacy.sandbox!;
      const fence = { denyRead: box.denyRead, allowRead: box.allowRead };
      const base = path.join(env.TMPDIR, `agentbox-${process.getuid!()}`);
      expect(box.denyRead).toEqual(
        expect.arrayContaining([home, base, path.dirname(worktree), path.join(root, '.git', 'worktrees')]),
      );
      const can = (p: string) => readable(fence, p);
      expect(can(path.join(home, '.npm', 'x'))).toBe(true);
      expect(can(path.join(home, '.cargo', 'registry', 'x'))).toBe(true);
      expect(can(path.join(home, '.cargo', 'credentials.toml'))).toBe(false);
      expect(can(path.join(home, 'bin', 'tool'))).toBe(true);
      expect(can(path.join(home, 'other.txt'))).toBe(false); // PATH names the home itself: not opened
      expect(can(path.join(home, 'opened', 'x'))).toBe(true);
      expect(can(path.join(home, 'opened', 'sub', 'x'))).toBe(false);
      expect(can(path.join(home, '.config', 'x'))).toBe(true);
      expect(can(path.join(home, '.config', 'gh', 'hosts.yml'))).toBe(false);
      expect(can(path.join(home, '.claude', 'projects', 'x.jsonl'))).toBe(false);
      expect(can(path.join(home, '.ssh', 'id'))).toBe(false);
      expect(can(path.join(worktree, 'a.txt'))).toBe(true);
      expect(can(path.join(path.dirname(worktree), 'fix-sibling', 'a.txt'))).toBe(false);
      // A fix run works on its worktree: the main tree (its untracked .env) is hidden, its git open.
      expect(can(path.join(root, 'a.txt'))).toBe(false);
      expect(can(path.join(root, '.env'))).toBe(false);
      expect(box.mainTree).toBe(root);
      expect(can(path.join(root, '.git', 'objects', 'x'))).toBe(true);
      expect(can(path.join(root, '.git', 'worktrees', 'fix-a', 'HEAD'))).toBe(true);
      expect(can(path.join(root, '.git', 'worktrees', 'fix-b', 'HEAD'))).toBe(false);
      expect(can(path.join(privacy.area.gitDir, 'config'))).toBe(true);
      expect(can(path.join(privacy.area.tmpDir, 'x'))).toBe(true);
      expect(can(path.join(base, 'work', 'fix-b', 'tmp', 'x'))).toBe(false);
      expect(can(path.join(privacy.area.secretsDir, 'settings.json'))).toBe(false);
    } finally {
      privacy.area.dispose();
      repo.cleanup();
    }
  });
});

describe('readFenceRules (Read deny rules for what is shut inside an opening)', () => {
  it('names credentials and deny_read inside opened paths; not the regions, the ledger, or a denial with an opening inside', async () => {
    const { readFenceRules } = await import('../../src/airlock/rules.js');
    const scope: AirlockScope = {
      type: 'fix',
      repoRoot: '/repo',
      ledgerDir: '/repo/.agents',
      runDir: '/repo/.agents/runs/r',
      worktree: '/repo/wt/fix-a',
      reads: {
        denyRead: ['/home/u', '/repo/.agents', '/home/u/.config/gh', '/repo/secret', '/repo/wt', '/odd path'],
        allowRead: ['/home/u/.config', '/repo', '/repo/wt/fix-a'],
      },
    };
    expect(readFenceRules(scope)).toEqual([
      'Read(//home/u/.config/gh)',
      'Read(//home/u/.config/gh/**)',
      'Read(//repo/secret)',
      'Read(//repo/secret/**)',
    ]);
    const { reads: _, ...open } = scope;
    expect(readFenceRules(open)).toEqual([]);
  });
});
