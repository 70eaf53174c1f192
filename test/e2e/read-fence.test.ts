import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type Reply } from '../fixtures/model-server/index.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { scriptedRun } from '../helpers/scripted-run.js';

/**
 * Reads are denied by default (issue 37, docs/security.md "Reads are denied by default"): from a
 * fix run and from a scout, by Bash, Python, the Read, Grep and Glob tools, a symlink the agent
 * plants and `git -C`, none of two dozen secret places of the person's home, Claude Code's config
 * dir, another repository's run worktree or a sibling attempt's work reaches the model, and each
 * attempt is in the run's events.jsonl. The other way: `npm ci` and `npm test` of a package from a
 * warm npm cache pass in the fix run, and runs.setup/runs.verify get the same fence.
 * One real run per direction, many attempts per turn, to keep it fast.
 */
const MARK = 'RF-SECRET';

/** The secret places, relative to HOME (`home`) or absolute (filled in beforeAll). */
const HOME_FILES: readonly string[] = [
  '.claude/.credentials.json',
  '.claude/.claude.json',
  '.claude.json',
  '.claude/projects/-srv-other-project/0f3c.jsonl',
  '.netrc',
  '.git-credentials',
  '.config/gh/hosts.yml',
  '.docker/config.json',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
  '.config/gcloud/application_default_credentials.json',
  '.azure/msal_token_cache.json',
  '.bash_history',
  '.zsh_history',
  '.password-store/bank.gpg',
  '.gnupg/private-keys-v1.d/key.key',
  '.aws/credentials',
  '.ssh/id_ed25519',
  '.kube/config',
  // Nothing names these two: denied because reads are denied by default.
  'private/notes.txt',
  '.config/unknown-tool/token',
];

describe('reads are denied by default (the real sandbox)', () => {
  let p: Project;
  let home: string;
  let root: string;
  /** Every secret file, absolute, with its mark. */
  let secrets: { file: string; mark: string }[];
  let otherRepoWorktree: string;
  let siblingWorktree: string;
  let siblingTmp: string;
  /** An untracked secret in the main tree (a fix run's agent must not read it; a scout works there). */
  let mainEnv: { file: string; mark: string };

  beforeAll(async () => {
    // A tiny package whose one dependency is in the person's npm cache only (no network here).
    const pkgDir = tempDir('rf-dep-');
    fs.writeFileSync(
      path.join(pkgDir, 'package.json'),
      JSON.stringify({ name: 'rf-tiny-pad', version: '1.0.0', main: 'index.js' }),
    );
    fs.writeFileSync(path.join(pkgDir, 'index.js'), 'module.exports = (s, n) => String(s).padStart(n);\n');
    p = await project({
      files: {
        'src/app.ts': 'export const x = 1;\n',
        '.gitignore': 'node_modules\n',
        'package.json': `${JSON.stringify({
          name: 'rf-app',
          version: '1.0.0',
          scripts: {
            test: `node -e "if (require('rf-tiny-pad')('a', 3) !== '  a') process.exit(1); console.log('rf tests pass')"`,
          },
          dependencies: { 'rf-tiny-pad': '1.0.0' },
        })}\n`,
      },
    });
    home = p.home.home;
    root = fs.realpathSync(p.repo.dir);
    const npm = (args: string[], cwd: string) =>
      execFileSync('npm', args, {
        cwd,
        env: { ...p.env, npm_config_update_notifier: 'false' },
        encoding: 'utf8',
      });
    const tarball = path.join(pkgDir, npm(['pack', '--silent'], pkgDir).trim());
    npm(['cache', 'add', tarball], pkgDir);
    const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    fs.writeFileSync(
      path.join(root, 'package-lock.json'),
      `${JSON.stringify({
        name: 'rf-app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'rf-app', version: '1.0.0', dependencies: { 'rf-tiny-pad': '1.0.0' } },
          'node_modules/rf-tiny-pad': {
            version: '1.0.0',
            resolved: 'https://registry.npmjs.org/rf-tiny-pad/-/rf-tiny-pad-1.0.0.tgz',
            integrity,
          },
        },
      })}\n`,
    );
    fs.writeFileSync(path.join(home, '.npm', 'rf-marker'), 'warm cache here\n');
    // The same fence around runs.setup and runs.verify: the cache's marker reads, the home does not.
    fs.writeFileSync(
      path.join(root, 'agentbox.yaml'),
      [
        'runs:',
        '  setup: cat "$HOME/.npm/rf-marker" "$AGENTBOX_REPO_ROOT/main-note.txt" && if cat "$HOME/.netrc"; then exit 9; fi',
        '  verify: npm test && cat "$HOME/.npm/rf-marker" && if cat "$HOME/.netrc"; then exit 9; fi',
        '',
      ].join('\n'),
    );
    p.repo.commit('a package');
    fs.rmSync(pkgDir, { recursive: true, force: true });

    secrets = HOME_FILES.map((rel, i) => ({ file: path.join(home, rel), mark: `${MARK}-${i}` }));
    // The main tree's untracked files: a fix run's agent works on its worktree, not on them; the
    // setup may read the main tree (it copies ignored folders such as node_modules from it).
    mainEnv = { file: path.join(root, '.env'), mark: `${MARK}-main-tree` };
    fs.writeFileSync(mainEnv.file, `${mainEnv.mark}\n`);
    fs.writeFileSync(path.join(root, 'main-note.txt'), 'main tree read by the setup\n');
    // Another repository's run worktree, and a sibling attempt's worktree, git and temp dir, where
    // agentbox puts them (src/run/begin/worktree.ts, src/sandbox/private.ts).
    const worktrees = path.join(home, '.local', 'share', 'agentbox', 'worktrees');
    const id = `${path.basename(root)}-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
    otherRepoWorktree = path.join(worktrees, 'other-repo-0123abcd', 'fix-other');
    siblingWorktree = path.join(worktrees, id, 'fix-sibling-attempt');
    const privateBase = path.join('/tmp', `agentbox-${process.getuid!()}`);
    siblingTmp = path.join(privateBase, 'work', `rf-sibling-${process.pid}`);
    secrets.push(
      { file: path.join(otherRepoWorktree, 'answer.txt'), mark: `${MARK}-other-repo` },
      { file: path.join(siblingWorktree, 'answer.txt'), mark: `${MARK}-sibling` },
      { file: path.join(siblingTmp, 'tmp', 'notes.txt'), mark: `${MARK}-sibling-tmp` },
      { file: path.join(siblingTmp, 'git', 'config'), mark: `${MARK}-sibling-git` },
    );
    for (const s of secrets) {
      fs.mkdirSync(path.dirname(s.file), { recursive: true });
      // Claude Code reads its own JSON files: keep them JSON (a mark it does not know).
      const json = s.file.endsWith('.json') && s.file.includes('claude');
      fs.writeFileSync(s.file, json ? `${JSON.stringify({ rfMark: s.mark })}\n` : `${s.mark}\n`);
    }
    // The repository's own config with a token, as a clone with a password in its URL or
    // actions/checkout's persisted credentials leave it: the run's git reads its own copy instead.
    const gitConfig = { file: path.join(root, '.git', 'config'), mark: `${MARK}-git-config` };
    execFileSync('git', ['config', 'remote.origin.url', `https://rf:${gitConfig.mark}@example.com/x.git`], {
      cwd: root,
    });
    execFileSync(
      'git',
      ['config', 'http.https://example.com/.extraheader', `AUTHORIZATION: basic ${gitConfig.mark}`],
      { cwd: root },
    );
    secrets.push(gitConfig);
    for (const wt of [otherRepoWorktree, siblingWorktree])
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'init', '-q'], { cwd: wt });
    for (const wt of [otherRepoWorktree, siblingWorktree])
      execFileSync(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', MARK, '--allow-empty'],
        {
          cwd: wt,
        },
      );
  }, 120_000);
  afterAll(async () => {
    if (siblingTmp) fs.rmSync(siblingTmp, { recursive: true, force: true });
    await p?.cleanup();
  });

  /** One turn per reply; what the model saw of each tool call, by turn. */
  const attempt = (type: 'fix' | 'scout', task: string, turns: Reply[]) => scriptedRun(p, type, task, turns);

  /** Every path the run's log says was refused: hidden reads (their paths) and the guard's (its input). */
  function refusedPaths(name: string): string {
    return JSON.stringify(
      p
        .events(name)
        .filter((e) => e.event === 'refused' || (e.event === 'PreToolUse' && e.decision === 'deny')),
    );
  }

  const files = () => secrets.map((s) => s.file);
  const readAll = (list = files()) => ({
    tools: list.map((file_path) => ({ name: 'Read', input: { file_path } })),
  });
  const python = (list = files()) =>
    `python3 -c "
import sys
for f in sys.argv[1:]:
    try:
        print(f, 'READ', open(f).read())
    except OSError as e:
        print(f, 'refused:', e)
" ${list.join(' ')}`;

  it('a fix run reads none of them, by any route, each refusal logged; npm ci and npm test pass from the warm cache', async () => {
    const fixFiles = [...files(), mainEnv.file];
    const turns: Reply[] = [
      bash(`cat ${fixFiles.join(' ')}`),
      bash(python(fixFiles)),
      readAll(fixFiles),
      {
        tools: [
          { name: 'Grep', input: { pattern: MARK, path: home, output_mode: 'content' } },
          { name: 'Grep', input: { pattern: MARK, path: '/', output_mode: 'content' } },
          { name: 'Grep', input: { pattern: MARK, path: siblingWorktree, output_mode: 'content' } },
          { name: 'Glob', input: { pattern: '**/*', path: path.join(home, '.claude') } },
          { name: 'Glob', input: { pattern: `${home}/.config/**` } },
        ],
      },
      bash(
        `ln -s ${home}/.netrc planted-link && ln -s ${siblingWorktree} planted-dir && cat planted-link; cat planted-dir/answer.txt`,
      ),
      {
        tools: [
          { name: 'Read', input: { file_path: 'planted-link' } },
          { name: 'Read', input: { file_path: 'planted-dir/answer.txt' } },
        ],
      },
      bash(`git -C ${siblingWorktree} log --format=%s -1; git -C ${otherRepoWorktree} show HEAD:answer.txt`),
      bash('npm ci && npm test'),
      // The main tree's .env by a path no string check can see (spelled backwards): the kernel's.
      bash(`python3 -c "print(open('${[...mainEnv.file].reverse().join('')}'[::-1]).read())"`),
      // The run's own git works, and knows the remote without its password.
      bash('git status --short src && git remote -v && git config --list --show-origin'),
    ];
    const { name, requests, results } = await attempt('fix', 'rf hostile fix', turns);
    const seen = requests.map((r) => r.allText).join('\n');
    const stream = p.read(name, 'raw/stream.jsonl');
    for (const s of [...secrets, mainEnv]) {
      expect(seen, s.file).not.toContain(s.mark);
      expect(stream, s.file).not.toContain(s.mark);
    }
    expect(seen).not.toMatch(new RegExp(`${MARK}-\\d`));
    expect(results(8)[0]!.content).toMatch(/No such file|Permission denied/);
    const git = results(9)[0]!;
    expect(git.isError, git.content).toBe(false);
    expect(git.content).toContain('origin\thttps://example.com/x.git (fetch)');
    expect(git.content).not.toContain('extraheader');
    // Every place, by cat, by Python and by the Read tool, is in the log as refused.
    const events = p.events(name);
    const logged = refusedPaths(name);
    const byTool = (i: number) => events.filter((e) => results(i).some((r) => r.toolUseId === e.toolUseId));
    for (const s of [...secrets, mainEnv]) {
      for (const turn of [0, 1, 2])
        expect(JSON.stringify(byTool(turn)), `turn ${turn}: ${s.file}`).toContain(s.file);
    }
    // Grep and Glob from above or inside a denied region, the planted links, git -C: refused, logged.
    for (const turn of [3, 4, 5, 6]) {
      for (const r of results(turn)) {
        expect(r.content, `turn ${turn}`).not.toContain(MARK);
        expect(logged, `turn ${turn}: ${r.content}`).toContain(r.toolUseId);
      }
    }
    expect(logged).toContain('read-fence');
    // The build works: npm ci from the warm cache in ~/.npm, then the tests.
    const npm = results(7)[0]!;
    expect(npm.content, npm.content).toContain('rf tests pass');
    expect(npm.isError).toBe(false);
    // runs.setup and runs.verify ran in the same fence: the cache read, the home hidden.
    expect(p.state(name).setup).toMatchObject({ ok: true });
    expect(p.read(name, 'raw/setup.log')).toContain('warm cache here');
    expect(p.read(name, 'raw/setup.log')).toContain('main tree read by the setup');
    expect(p.read(name, 'raw/verify-1.log')).toContain('rf tests pass');
    expect(p.read(name, 'raw/verify-1.log')).not.toContain(MARK);
    expect(p.state(name).status).toBe('REVIEW');
  }, 360_000);

  it('a scout reads none of them either, each refusal logged', async () => {
    // A hostile repository's links, which Claude Code's read-only classifier lets a scout cat.
    const links = path.join(root, 'links');
    fs.mkdirSync(links);
    for (const [i, s] of secrets.entries()) fs.symlinkSync(s.file, path.join(links, String(i)));
    const turns: Reply[] = [
      bash(`cat ${files().join(' ')}`),
      bash('cat links/*'),
      bash(`grep -R ${MARK} links/ .`),
      readAll(),
      {
        tools: [
          { name: 'Grep', input: { pattern: MARK, path: home, output_mode: 'content' } },
          { name: 'Grep', input: { pattern: MARK, path: '/tmp', output_mode: 'content' } },
          { name: 'Glob', input: { pattern: '**/*.jsonl', path: path.join(home, '.claude', 'projects') } },
          { name: 'Read', input: { file_path: path.join(links, '0') } },
        ],
      },
      bash(`git -C ${siblingWorktree} log --format=%s -1`),
      bash('cat src/app.ts && git log --format=%s -1 && git status --short src'),
    ];
    try {
      const { name, requests, results } = await attempt('scout', 'rf hostile scout', turns);
      const seen = requests.map((r) => r.allText).join('\n');
      const stream = p.read(name, 'raw/stream.jsonl');
      for (const s of secrets) {
        expect(seen, s.file).not.toContain(s.mark);
        expect(stream, s.file).not.toContain(s.mark);
      }
      const events = p.events(name);
      const byTool = (i: number) => events.filter((e) => results(i).some((r) => r.toolUseId === e.toolUseId));
      // Through the links (the sandbox hides each), and by the Read tool (the guard): each place logged.
      for (const s of secrets)
        for (const turn of [1, 3])
          expect(JSON.stringify(byTool(turn)), `turn ${turn}: ${s.file}`).toContain(s.file);
      // Absolute paths, grep -r, Grep, Glob, git -C: refused (by the classifier, the sandbox or the
      // guard), each in the log.
      const logged = refusedPaths(name);
      for (const turn of [0, 2, 4, 5])
        for (const r of results(turn)) expect(logged, `turn ${turn}: ${r.content}`).toContain(r.toolUseId);
      // It still reads its repository.
      // Its git too, with the repository's config hidden.
      expect(results(6)[0]!.content).toContain('export const x = 1');
      expect(results(6)[0]!.content).toContain('a package');
      expect(results(6)[0]!.isError).toBe(false);
      expect(p.state(name).status).toBe('DONE');
    } finally {
      fs.rmSync(links, { recursive: true, force: true });
    }
  }, 360_000);

  it('a fix run whose worktree lives in the repository (runs.worktree_dir) works in it; a sibling there stays hidden', async () => {
    fs.writeFileSync(path.join(root, 'agentbox.yaml'), 'runs:\n  worktree_dir: wt\n');
    fs.appendFileSync(path.join(root, '.gitignore'), 'wt\n');
    p.repo.commit('worktrees in the repository');
    const sibling = path.join(root, 'wt', 'fix-sibling', 'answer.txt');
    fs.mkdirSync(path.dirname(sibling), { recursive: true });
    fs.writeFileSync(sibling, `${MARK}-in-repo\n`);
    const turns: Reply[] = [
      bash('cat src/app.ts && echo made > new.txt && cat new.txt'),
      { tools: [{ name: 'Read', input: { file_path: 'src/app.ts' } }] },
      {
        tools: [
          { name: 'Read', input: { file_path: sibling } },
          { name: 'Grep', input: { pattern: `${MARK}-in`, path: root, output_mode: 'content' } },
        ],
      },
      bash(`cat ${sibling}; cat ../fix-sibling/answer.txt`),
    ];
    const { name, requests, results } = await attempt('fix', 'rf worktree in repo', turns);
    expect(p.state(name).worktree_path).toContain(path.join(root, 'wt'));
    expect(results(0)[0]!.content).toContain('export const x = 1');
    expect(results(0)[0]!.content, results(0)[0]!.content).toContain('made');
    expect(results(1)[0]!.content).toContain('export const x = 1');
    expect(requests.map((r) => r.allText).join('\n')).not.toContain(`${MARK}-in-repo`);
    const logged = refusedPaths(name);
    expect(logged).toContain(results(3)[0]!.toolUseId);
    // The sibling by the Read tool, and a Grep from the repository's root (it would walk the other
    // worktrees there): the guard's refusals.
    for (const r of results(2)) expect(logged, r.content).toContain(r.toolUseId);
    expect(p.state(name).status).toBe('REVIEW');
    expect(p.read(name, 'changes.patch')).toContain('new.txt');
  }, 240_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
