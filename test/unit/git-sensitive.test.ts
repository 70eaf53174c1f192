import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportPatch } from '../../src/git/patch.js';
import {
  type Inspection,
  type InspectOptions,
  inspectPatch,
  locationKind,
  resolveLink,
  type SensitiveChange,
  sensitiveLines,
} from '../../src/git/sensitive.js';
import { addWorktree } from '../../src/git/worktree.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

const ROOT = '/repo';
const SHA = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
const ZERO = '0000000000000000000000000000000000000000';

// Sections as `git diff --binary --full-index -M` writes them.
const header = (a: string, b: string) => `diff --git a/${a} b/${b}`;
const added = (file: string, mode = '100644') =>
  `${header(file, file)}\nnew file mode ${mode}\nindex ${ZERO}..${SHA}\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1 @@\n+x\n`;
const modified = (file: string, mode = '100644') =>
  `${header(file, file)}\nindex ${SHA}..${SHA} ${mode}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-x\n+y\n`;
const deleted = (file: string, mode = '100644') =>
  `${header(file, file)}\ndeleted file mode ${mode}\nindex ${SHA}..${ZERO}\n--- a/${file}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n`;
const renamed = (from: string, to: string) =>
  `${header(from, to)}\nsimilarity index 100%\nrename from ${from}\nrename to ${to}\n`;
const renamedEdited = (from: string, to: string, mode = '100644') =>
  `${header(from, to)}\nsimilarity index 80%\nrename from ${from}\nrename to ${to}\nindex ${SHA}..${SHA} ${mode}\n--- a/${from}\n+++ b/${to}\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n`;
const modeChange = (file: string, from: string, to: string) =>
  `${header(file, file)}\nold mode ${from}\nnew mode ${to}\n`;
const binary = (file: string, mode = '100644') =>
  `${header(file, file)}\nnew file mode ${mode}\nindex ${ZERO}..${SHA}\nGIT binary patch\nliteral 3\nKcmYdfNCE%>hycU@\n\nliteral 0\nHcmV?d00001\n\n`;
const link = (file: string, target: string) =>
  `${header(file, file)}\nnew file mode 120000\nindex ${ZERO}..${SHA}\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1 @@\n+${target}\n\\ No newline at end of file\n`;
const linkChanged = (file: string, from: string, to: string) =>
  `${header(file, file)}\nindex ${SHA}..${SHA} 120000\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-${from}\n\\ No newline at end of file\n+${to}\n\\ No newline at end of file\n`;

const S = (path: string, kind: SensitiveChange['kind'], detail: string): SensitiveChange => ({
  path,
  kind,
  detail,
});
const none: Inspection = { sensitive: [], refused: [] };
const sensitive = (...items: SensitiveChange[]): Inspection => ({ sensitive: items, refused: [] });
const refused = (...items: SensitiveChange[]): Inspection => ({ sensitive: [], refused: items });

describe('inspectPatch', () => {
  it.each<[string, string, Inspection, InspectOptions?]>([
    ['ordinary code', modified('src/a.ts') + added('src/b.ts') + deleted('src/c.ts'), none],
    ['an empty patch', '', none],
    // ledger
    [
      'the ledger',
      added('.agents/runs/x/report.md'),
      sensitive(S('.agents/runs/x/report.md', 'ledger', 'added')),
    ],
    // agent-config
    [
      'Claude Code settings',
      modified('.claude/settings.json'),
      sensitive(S('.claude/settings.json', 'agent-config', 'modified')),
    ],
    [
      'a nested .claude folder',
      added('pkg/.claude/commands/x.md'),
      sensitive(S('pkg/.claude/commands/x.md', 'agent-config', 'added')),
    ],
    ['.mcp.json', added('.mcp.json'), sensitive(S('.mcp.json', 'agent-config', 'added'))],
    ['CLAUDE.md', modified('CLAUDE.md'), sensitive(S('CLAUDE.md', 'agent-config', 'modified'))],
    ['CLAUDE.local.md', added('CLAUDE.local.md'), sensitive(S('CLAUDE.local.md', 'agent-config', 'added'))],
    [
      'AGENTS.md in a subfolder',
      added('docs/AGENTS.md'),
      sensitive(S('docs/AGENTS.md', 'agent-config', 'added')),
    ],
    ['a file merely named like one', added('docs/claude.md.bak') + added('src/claude.ts'), none],
    // git-meta
    ['.gitignore', modified('.gitignore'), sensitive(S('.gitignore', 'git-meta', 'modified'))],
    ['a nested .gitignore', added('src/.gitignore'), sensitive(S('src/.gitignore', 'git-meta', 'added'))],
    ['.gitattributes', added('.gitattributes'), sensitive(S('.gitattributes', 'git-meta', 'added'))],
    ['.gitmodules', modified('.gitmodules'), sensitive(S('.gitmodules', 'git-meta', 'modified'))],
    [
      'any other .git* name',
      added('.git-blame-ignore-revs'),
      sensitive(S('.git-blame-ignore-revs', 'git-meta', 'added')),
    ],
    ['a .git* folder', added('.gitfoo/x'), sensitive(S('.gitfoo/x', 'git-meta', 'added'))],
    ['.gitkeep is no git file', added('empty/.gitkeep'), none],
    // ci
    [
      'a GitHub workflow',
      modified('.github/workflows/ci.yml'),
      sensitive(S('.github/workflows/ci.yml', 'ci', 'modified')),
    ],
    ['.gitlab-ci.yml', added('.gitlab-ci.yml'), sensitive(S('.gitlab-ci.yml', 'ci', 'added'))],
    ['a GitLab include', added('.gitlab/ci/test.yml'), sensitive(S('.gitlab/ci/test.yml', 'ci', 'added'))],
    ['CircleCI', added('.circleci/config.yml'), sensitive(S('.circleci/config.yml', 'ci', 'added'))],
    ['Buildkite', added('.buildkite/pipeline.yml'), sensitive(S('.buildkite/pipeline.yml', 'ci', 'added'))],
    ['a Jenkinsfile', modified('Jenkinsfile'), sensitive(S('Jenkinsfile', 'ci', 'modified'))],
    ['Azure Pipelines', added('azure-pipelines.yml'), sensitive(S('azure-pipelines.yml', 'ci', 'added'))],
    ['Travis', added('.travis.yml'), sensitive(S('.travis.yml', 'ci', 'added'))],
    // hooks
    ['husky', modified('.husky/pre-commit'), sensitive(S('.husky/pre-commit', 'hooks', 'modified'))],
    [
      '.githooks is hooks, not git-meta',
      added('.githooks/pre-push'),
      sensitive(S('.githooks/pre-push', 'hooks', 'added')),
    ],
    ['lefthook.yml', modified('lefthook.yml'), sensitive(S('lefthook.yml', 'hooks', 'modified'))],
    ['.lefthook.yml', added('.lefthook.yml'), sensitive(S('.lefthook.yml', 'hooks', 'added'))],
    [
      'lefthook-local.yaml',
      added('lefthook-local.yaml'),
      sensitive(S('lefthook-local.yaml', 'hooks', 'added')),
    ],
    [
      'pre-commit',
      modified('.pre-commit-config.yaml'),
      sensitive(S('.pre-commit-config.yaml', 'hooks', 'modified')),
    ],
    [
      'the core.hooksPath folder',
      modified('tools/hooks/pre-commit') + added('tools/hooksx/y'),
      sensitive(S('tools/hooks/pre-commit', 'hooks', 'modified')),
      { hooksPath: 'tools/hooks/' },
    ],
    [
      'an absolute core.hooksPath inside the repository',
      modified('tools/hooks/pre-commit'),
      sensitive(S('tools/hooks/pre-commit', 'hooks', 'modified')),
      { hooksPath: `${ROOT}/tools/hooks` },
    ],
    [
      'a file replacing a folder the hooksPath is in',
      added('tools'),
      sensitive(S('tools', 'hooks', 'added')),
      { hooksPath: 'tools/hooks' },
    ],
    [
      'a core.hooksPath outside the repository',
      modified('tools/hooks/pre-commit'),
      none,
      { hooksPath: '/etc/hooks' },
    ],
    // agentbox
    ['agentbox.yaml', modified('agentbox.yaml'), sensitive(S('agentbox.yaml', 'agentbox', 'modified'))],
    ['.agentbox/', added('.agentbox/x.json'), sensitive(S('.agentbox/x.json', 'agentbox', 'added'))],
    // .git itself
    [
      'a path inside .git',
      added('.git/hooks/pre-commit'),
      refused(S('.git/hooks/pre-commit', 'git-dir', 'added')),
    ],
    ['a nested .git', added('vendor/x/.git/config'), refused(S('vendor/x/.git/config', 'git-dir', 'added'))],
    // executable
    [
      'a new executable',
      added('bin/run', '100755'),
      sensitive(S('bin/run', 'executable', 'new file, mode 100755')),
    ],
    [
      'a mode-only change to executable',
      modeChange('run.sh', '100644', '100755'),
      sensitive(S('run.sh', 'executable', 'mode 100644 → 100755')),
    ],
    ['a mode-only change away from executable', modeChange('run.sh', '100755', '100644'), none],
    ['an edit of an executable that stays one', modified('run.sh', '100755'), none],
    ['a rename of an executable', renamedEdited('a.sh', 'b.sh', '100755'), none],
    [
      'a new binary executable',
      binary('bin/tool', '100755'),
      sensitive(S('bin/tool', 'executable', 'new file, mode 100755')),
    ],
    [
      'a new executable hook: two facts',
      added('.githooks/pre-commit', '100755'),
      sensitive(
        S('.githooks/pre-commit', 'hooks', 'added'),
        S('.githooks/pre-commit', 'executable', 'new file, mode 100755'),
      ),
    ],
    // renames and deletes
    [
      'a rename into CI',
      renamed('src/x.yml', '.github/workflows/x.yml'),
      sensitive(S('.github/workflows/x.yml', 'ci', 'renamed from src/x.yml')),
    ],
    [
      'a rename out of CI',
      renamed('.github/workflows/ci.yml', 'docs/ci.yml'),
      sensitive(S('.github/workflows/ci.yml', 'ci', 'renamed to docs/ci.yml')),
    ],
    [
      'a rename within one kind',
      renamedEdited('.claude/a.md', '.claude/b.md'),
      sensitive(S('.claude/b.md', 'agent-config', 'renamed from .claude/a.md')),
    ],
    [
      'a rename between two kinds',
      renamed('.husky/x.yml', '.github/x.yml'),
      sensitive(
        S('.husky/x.yml', 'hooks', 'renamed to .github/x.yml'),
        S('.github/x.yml', 'ci', 'renamed from .husky/x.yml'),
      ),
    ],
    [
      'a deleted workflow',
      deleted('.github/workflows/ci.yml'),
      sensitive(S('.github/workflows/ci.yml', 'ci', 'deleted')),
    ],
    ['a deleted executable or symlink', deleted('run.sh', '100755') + deleted('l', '120000'), none],
    // binary
    [
      'a binary file in .claude',
      binary('.claude/icon.png'),
      sensitive(S('.claude/icon.png', 'agent-config', 'added (binary)')),
    ],
    ['an ordinary binary file', binary('img/logo.png'), none],
    // case variants (case-insensitive file systems)
    [
      '.Claude/',
      added('.Claude/settings.json'),
      sensitive(S('.Claude/settings.json', 'agent-config', 'added')),
    ],
    ['.GITHUB/', added('.GITHUB/workflows/x.yml'), sensitive(S('.GITHUB/workflows/x.yml', 'ci', 'added'))],
    [
      'Claude.MD and JENKINSFILE',
      added('Claude.MD') + added('JENKINSFILE'),
      sensitive(S('Claude.MD', 'agent-config', 'added'), S('JENKINSFILE', 'ci', 'added')),
    ],
    ['.Git/', added('.Git/config'), refused(S('.Git/config', 'git-dir', 'added'))],
    // quoted and spaced names
    [
      'a C-quoted UTF-8 name',
      `diff --git "a/.claude/\\303\\251.md" "b/.claude/\\303\\251.md"\nnew file mode 100644\nindex ${ZERO}..${SHA}\n--- /dev/null\n+++ "b/.claude/\\303\\251.md"\n@@ -0,0 +1 @@\n+x\n`,
      sensitive(S('.claude/é.md', 'agent-config', 'added')),
    ],
    [
      'a name with spaces, mode only',
      modeChange('my dir/x y.sh', '100644', '100755'),
      sensitive(S('my dir/x y.sh', 'executable', 'mode 100644 → 100755')),
    ],
  ])('%s', (_name, patch, expected, options) => {
    expect(inspectPatch(patch, ROOT, options)).toEqual(expected);
  });

  it.each<[string, string, Inspection, Record<string, string>?]>([
    [
      'a link inside the repository',
      link('lib/a', '../src/x'),
      sensitive(S('lib/a', 'symlink', 'new symlink → ../src/x')),
    ],
    [
      'a link to its own folder',
      link('lib/self', '.'),
      sensitive(S('lib/self', 'symlink', 'new symlink → .')),
    ],
    [
      'an absolute target',
      link('a', '/etc/passwd'),
      refused(S('a', 'symlink', 'new symlink → /etc/passwd: an absolute target')),
    ],
    [
      'an absolute target into the repository',
      link('a', `${ROOT}/src`),
      refused(S('a', 'symlink', `new symlink → ${ROOT}/src: an absolute target`)),
    ],
    [
      'a target one folder up',
      link('a', '../x'),
      refused(S('a', 'symlink', `new symlink → ../x: leaves ${ROOT}`)),
    ],
    [
      'a target that escapes after normalisation',
      link('d/e/a', 'f/../../../../x'),
      refused(S('d/e/a', 'symlink', `new symlink → f/../../../../x: leaves ${ROOT}`)),
    ],
    [
      'a target that comes back is inside',
      link('d/e/a', '../../d/./x'),
      sensitive(S('d/e/a', 'symlink', 'new symlink → ../../d/./x')),
    ],
    [
      'a target into .git',
      link('g', '.git/hooks'),
      refused(S('g', 'symlink', 'new symlink → .git/hooks: points into .git')),
    ],
    [
      'a target into .GIT from a subfolder',
      link('s/g', '../.GIT/config'),
      refused(S('s/g', 'symlink', 'new symlink → ../.GIT/config: points into .git')),
    ],
    [
      'the .git folder itself',
      link('g', 'x/../.git'),
      refused(S('g', 'symlink', 'new symlink → x/../.git: points into .git')),
    ],
    [
      'a changed link that now leaves',
      linkChanged('l', 'src', '../../etc'),
      refused(S('l', 'symlink', `symlink → ../../etc: leaves ${ROOT}`)),
    ],
    [
      'a changed link that stays inside',
      linkChanged('l', 'src', 'lib'),
      sensitive(S('l', 'symlink', 'symlink → lib')),
    ],
    [
      'through a link of the tree that points outside',
      link('x', 'vendor/lib'),
      refused(
        S('x', 'symlink', 'new symlink → vendor/lib: an absolute target (through vendor → /opt/vendor)'),
      ),
      { vendor: '/opt/vendor' },
    ],
    [
      'up through a link: a/.. is not the folder when a is a link',
      link('x', 'sub/up/..'),
      refused(S('x', 'symlink', `new symlink → sub/up/..: leaves ${ROOT} (through sub/up → ..)`)),
      { 'sub/up': '..' },
    ],
    [
      'through a link the same patch adds',
      link('d/up', '..') + link('y', 'd/up/..'),
      {
        sensitive: [S('d/up', 'symlink', 'new symlink → ..')],
        refused: [S('y', 'symlink', `new symlink → d/up/..: leaves ${ROOT} (through d/up → ..)`)],
      },
    ],
    [
      'a plain rename moves a link of the tree out of the repository',
      renamed('sub/up', 'up2'),
      refused(S('up2', 'symlink', `symlink moved from sub/up → ../f: leaves ${ROOT}`)),
      { 'sub/up': '../f' },
    ],
    [
      'a plain rename of a link that stays inside',
      renamed('sub/a', 'sub/b'),
      sensitive(S('sub/b', 'symlink', 'symlink moved from sub/a → x')),
      { 'sub/a': 'x' },
    ],
    [
      'a loop stays inside',
      link('a', 'b') + link('b', 'a'),
      sensitive(
        S('a', 'symlink', 'new symlink → b (a symlink loop)'),
        S('b', 'symlink', 'new symlink → a (a symlink loop)'),
      ),
    ],
    [
      'a target that cannot be read (binary)',
      binary('l', '120000'),
      refused(S('l', 'symlink', 'new symlink: its target cannot be read from the patch')),
    ],
    [
      'a target with a trailing newline is not one git writes',
      `${header('l', 'l')}\nnew file mode 120000\nindex ${ZERO}..${SHA}\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+src\n`,
      refused(S('l', 'symlink', 'new symlink: its target cannot be read from the patch')),
    ],
    [
      'a link at a sensitive place: both',
      link('.claude/commands', '../docs/commands'),
      sensitive(
        S('.claude/commands', 'agent-config', 'added'),
        S('.claude/commands', 'symlink', 'new symlink → ../docs/commands'),
      ),
    ],
    [
      'a file turned into a link (two sections)',
      deleted('conf') + link('conf', '/etc/app.conf'),
      refused(S('conf', 'symlink', 'new symlink → /etc/app.conf: an absolute target')),
    ],
  ])('symlinks: %s', (_name, patch, expected, links) => {
    expect(inspectPatch(patch, ROOT, { symlinks: new Map(Object.entries(links ?? {})) })).toEqual(expected);
  });

  it('reads a Buffer as bytes and a string as text', () => {
    const patch = added('.claude/é.md');
    const expected = sensitive(S('.claude/é.md', 'agent-config', 'added'));
    expect(inspectPatch(patch, ROOT)).toEqual(expected);
    expect(inspectPatch(Buffer.from(patch), ROOT)).toEqual(expected);
  });

  it('a hunk line that looks like a header is content', () => {
    const patch = `${modified('src/a.ts').replace('+y\n', '+new file mode 100755\n+++ b/.github/x\n')}`;
    expect(inspectPatch(patch, ROOT)).toEqual(none);
  });
});

describe('locationKind', () => {
  it.each<[string, string | null, string | null]>([
    ['src/index.ts', null, null],
    ['.github', null, 'ci'],
    ['.claude/hooks/x.sh', null, 'agent-config'],
    ['scripts/hooks/pre-commit', 'scripts/hooks', 'hooks'],
    ['scripts/hook', 'scripts/hooks', null],
  ])('%s (hooksPath %s) is %s', (file, hooksPath, kind) => {
    expect(locationKind(file, hooksPath)).toBe(kind);
  });
});

describe('resolveLink', () => {
  it.each<[string, string, string]>([
    ['a', 'b', 'inside'],
    ['a/b', '..', 'inside'],
    ['a/b', '../..', 'outside'],
    ['a', '/x', 'absolute'],
    ['a', '.git', 'git'],
    ['a', './.git/', 'git'],
    ['a', 'sub/.git/hooks', 'git'],
  ])('%s → %s is %s', (file, target, kind) => {
    expect(resolveLink(file, target, new Map()).kind).toBe(kind);
  });
});

describe('sensitiveLines', () => {
  it('aligns path, kind and detail, and shows control characters in names escaped, a name quoted', () => {
    expect(
      sensitiveLines([
        S('.github/workflows/ci.yml', 'ci', 'modified'),
        S('x\u001b[2Ky', 'symlink', 'new symlink → a\nb\u202e'),
      ]),
    ).toEqual([
      '  .github/workflows/ci.yml  ci       modified',
      '  "x\\x1b[2Ky"               symlink  new symlink → a\\nb\\u202e',
    ]);
  });
});

describe('inspecting what exportPatch writes', () => {
  let repo: TestRepo;
  let dir: string;
  beforeAll(() => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a real patch: every kind of header git writes', async () => {
    repo = gitRepo({
      files: { 'run.sh': '#!/bin/sh\n', '.github/workflows/ci.yml': 'on: push\n', 'src/a.ts': 'a\n' },
    });
    fs.symlinkSync('../src/a.ts', path.join(repo.dir, 'src/link'));
    const base = repo.commit('links');
    dir = tempDir('agentbox-sensitive-');
    const wt = path.join(dir, 'wt');
    await addWorktree(repo.dir, { path: wt, branch: 'run', base });
    const at = (f: string) => path.join(wt, f);
    fs.mkdirSync(at('.Claude'));
    fs.writeFileSync(at('.Claude/settings.json'), '{}\n');
    fs.writeFileSync(at('.mcp.json'), Buffer.from([0x7b, 0, 0x7d]));
    fs.chmodSync(at('run.sh'), 0o755);
    fs.writeFileSync(at('tool'), 'x\n', { mode: 0o755 });
    fs.symlinkSync('/etc/passwd', at('abs'));
    fs.symlinkSync('src/link/..', at('up'));
    fs.mkdirSync(at('docs'));
    fs.renameSync(at('.github/workflows/ci.yml'), at('docs/ci.yml'));
    fs.writeFileSync(at('src/a.ts'), 'b\n');
    const { patch } = await exportPatch(wt, { base });
    const symlinks = new Map([['src/link', '../src/a.ts']]);
    expect(inspectPatch(patch, repo.dir, { symlinks })).toEqual({
      sensitive: [
        S('.Claude/settings.json', 'agent-config', 'added'),
        S('.mcp.json', 'agent-config', 'added (binary)'),
        S('.github/workflows/ci.yml', 'ci', 'renamed to docs/ci.yml'),
        S('run.sh', 'executable', 'mode 100644 → 100755'),
        S('tool', 'executable', 'new file, mode 100755'),
        S('up', 'symlink', 'new symlink → src/link/..'),
      ],
      refused: [S('abs', 'symlink', 'new symlink → /etc/passwd: an absolute target')],
    });
  });
});
