import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * A read-only run reads the person's working tree where it lies: what git tracks, their edits and
 * new files, and the repository's installed packages — not what they told git to ignore (a `.env`,
 * a key, build output), by any spelling: the shell in the real sandbox, the Read, Grep and Glob
 * tools through the guard. Too many ignored entries to hide refuse the run before it exists.
 */
const SECRET = 'IGNORED-SECRET-7319';

describe('a read-only run and the files git ignores (the real sandbox)', () => {
  let p: Project;
  let root: string;
  beforeAll(async () => {
    p = await project({
      files: {
        '.gitignore': '.env\nbuild/\n*.key\nnode_modules/\n*.o\n',
        'src/app.ts': 'export const x = 1;\n',
      },
    });
    root = fs.realpathSync(p.repo.dir);
    const write = (file: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), content);
    };
    write('.env', `API_TOKEN=${SECRET}-env\n`);
    write('build/out.txt', `${SECRET}-build\n`);
    write('conf/dev.key', `${SECRET}-key\n`);
    write('node_modules/pkg/index.js', 'module.exports = "PACKAGE-CODE";\n');
    write('wip.txt', 'WORK-IN-PROGRESS\n');
  });
  afterAll(async () => p?.cleanup());

  it('hides them from every route, not the tracked, new or package files; the shell’s refusals are logged', async () => {
    const attempts: { label: string; reply: (r: RequestView) => unknown; sees?: string }[] = [
      { label: 'cat', reply: () => bash('cat .env build/out.txt conf/dev.key') },
      { label: 'a glob', reply: () => bash('cat ./.e* build/* conf/*') },
      { label: 'rg -uuu', reply: () => bash(`rg -uuu -e ${SECRET.slice(0, 12)} .`) },
      { label: 'grep -r', reply: () => bash(`grep -r ${SECRET.slice(0, 12)} .`) },
      { label: 'Read', reply: () => tool('Read', { file_path: `${root}/.env` }) },
      { label: 'Read, relative', reply: () => tool('Read', { file_path: 'build/out.txt' }) },
      {
        label: 'Read, by a dotted path',
        reply: () => tool('Read', { file_path: `${root}/src/../conf/dev.key` }),
      },
      {
        label: 'Grep the build folder',
        reply: () => tool('Grep', { pattern: 'SECRET', path: `${root}/build`, output_mode: 'content' }),
      },
      {
        label: 'Glob into the build folder',
        reply: () => tool('Glob', { pattern: 'build/**/*', path: root }),
      },
      { label: 'tracked', reply: () => bash('cat src/app.ts'), sees: 'export const x = 1' },
      { label: 'new', reply: () => bash('cat wip.txt'), sees: 'WORK-IN-PROGRESS' },
      { label: 'package', reply: () => bash('cat node_modules/pkg/index.js'), sees: 'PACKAGE-CODE' },
    ];
    const task = 'read what git ignores';
    p.server.setRules([
      ...attempts.map((a, turn) => ({
        name: a.label,
        when: { turn, anyText: task },
        reply: a.reply as never,
      })),
      { when: { turn: attempts.length, anyText: task }, reply: text('done') },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task], { timeoutMs: 300_000 });
    expect(result.code, result.stderr).toBe(0);
    const requests = p.server.requests.slice(first);
    const resultOf = (turn: number) => requests.find((r) => r.view.turn === turn + 1)?.view.toolResults[0];
    expect(requests.map((r) => r.view.allText).join('\n')).not.toContain(SECRET);
    const name = p.newest();
    expect(fs.readFileSync(path.join(p.runDir(name), 'raw', 'stream.jsonl'), 'utf8')).not.toContain(SECRET);
    for (const [i, a] of attempts.entries()) {
      expect(resultOf(i), a.label).toBeTruthy();
      if (a.sees) expect(resultOf(i)!.content, a.label).toContain(a.sees);
    }
    // The shell's read of hidden paths is refused where the kernel hides them, and logged.
    const refused = p.events(name).filter((e) => e.event === 'refused');
    expect(refused.find((e) => e.toolUseId === resultOf(0)!.toolUseId)).toBeTruthy();
    expect(p.state(name).status).toBe('DONE');
  }, 360_000);

  it('a submodule’s and a nested repository’s ignored files are hidden too, and the nested one’s git config (found by QA: git’s listing stops at them)', async () => {
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], {
        cwd,
        stdio: 'pipe',
        env: { ...process.env, ...GIT_ENV },
      });
    // An untracked repository inside, with its own ignore rules and a token in its remote's URL.
    const nested = path.join(root, 'tools', 'other');
    fs.mkdirSync(nested, { recursive: true });
    git(nested, 'init', '-q');
    fs.writeFileSync(path.join(nested, '.gitignore'), 'local.cfg\n');
    fs.writeFileSync(path.join(nested, 'local.cfg'), `${SECRET}-nested\n`);
    git(nested, 'remote', 'add', 'origin', `https://user:${SECRET}-token@example.com/x.git`);
    // A submodule whose own .gitignore names its .env.
    const source = path.join(path.dirname(root), `${path.basename(root)}-sub`);
    fs.mkdirSync(source);
    git(source, 'init', '-q');
    fs.writeFileSync(path.join(source, '.gitignore'), 'sub.env\n');
    fs.writeFileSync(path.join(source, 'lib.js'), 'module.exports = "SUB-CODE";\n');
    git(source, 'add', '-A');
    git(source, 'commit', '-qm', 'sub');
    git(root, 'submodule', 'add', '-q', source, 'libs/sub');
    git(root, 'commit', '-qm', 'the submodule');
    fs.writeFileSync(path.join(root, 'libs/sub/sub.env'), `${SECRET}-sub\n`);
    // A repository committed inside by `git add` (a gitlink, no .gitmodules: found by QA).
    const embedded = path.join(root, 'embedded');
    fs.mkdirSync(embedded);
    git(embedded, 'init', '-q');
    fs.writeFileSync(path.join(embedded, '.gitignore'), 'secret.txt\n');
    fs.writeFileSync(path.join(embedded, 'secret.txt'), `${SECRET}-embedded\n`);
    git(embedded, 'add', '-A');
    git(embedded, 'commit', '-qm', 'e');
    git(embedded, 'remote', 'add', 'origin', `https://user:${SECRET}-etoken@example.com/e.git`);
    git(root, 'add', 'embedded');
    git(root, 'commit', '-qm', 'an embedded repository');
    const steps = [
      bash(
        'cat tools/other/local.cfg libs/sub/sub.env tools/other/.git/config embedded/secret.txt embedded/.git/config',
      ),
      bash(`rg -uuu ${SECRET.slice(0, 12)} embedded`),
      tool('Read', { file_path: `${root}/embedded/.git/config` }),
      tool('Read', { file_path: `${root}/libs/sub/sub.env` }),
      tool('Read', { file_path: `${root}/tools/other/.git/config` }),
      bash(`grep -r ${SECRET.slice(0, 12)} libs tools`),
      bash('cat libs/sub/lib.js'),
    ];
    const task = 'read the nested ones';
    p.server.setRules([
      ...steps.map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
      { when: { turn: steps.length, anyText: task }, reply: text('done') },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task], { timeoutMs: 180_000 });
    expect(result.code, result.stderr).toBe(0);
    const requests = p.server.requests.slice(first);
    expect(requests.length).toBeGreaterThan(steps.length);
    if (process.env.FENCE_DEBUG)
      for (const r of requests)
        console.log(r.view.turn, JSON.stringify(r.view.toolResults[0]?.content ?? '').slice(0, 300));
    expect(requests.map((r) => r.view.allText).join('\n')).not.toContain(SECRET);
    expect(requests.find((r) => r.view.turn === steps.length)?.view.toolResults[0]?.content).toContain(
      'SUB-CODE',
    );
    fs.rmSync(source, { recursive: true, force: true });
  }, 240_000);

  it('too many to hide: refused before the run exists, naming them and what to do; the folders the person opens are not counted', async () => {
    for (let i = 0; i < 320; i++) {
      fs.mkdirSync(path.join(root, 'objs', `d${i}`), { recursive: true });
      fs.writeFileSync(path.join(root, 'objs', `d${i}`, 'a.c'), 'int a;\n');
      fs.writeFileSync(path.join(root, 'objs', `d${i}`, 'a.o'), 'obj\n');
    }
    const runs = p.runs().length;
    const refused = await p.agentbox(['scout', 'many ignored']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/has 32\d files and folders git ignores/);
    expect(refused.stderr).toContain('git status --ignored --short');
    expect(refused.stderr).toContain('sandbox.allow_read in your own config');
    expect(p.runs()).toHaveLength(runs);
    // Opened by the person (their own config): not hidden, not counted.
    const config = path.join(p.home.home, 'agentbox-config.yaml');
    fs.writeFileSync(config, 'sandbox:\n  allow_read: [objs]\n');
    p.server.setRules([{ when: { anyText: 'opened objs' }, reply: text('ok') }]);
    const opened = await p.agentbox(['scout', 'opened objs'], { env: { AGENTBOX_CONFIG: config } });
    expect(opened.code, opened.stderr).toBe(0);
    fs.rmSync(path.join(root, 'objs'), { recursive: true, force: true });
  }, 120_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
