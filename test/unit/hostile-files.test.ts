import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRunTemplates } from '../../src/templates/load.js';
import { templateDirs } from '../../src/templates/locate.js';
import { readRepoText, readTextIfExists, refuseWriteOut } from '../../src/util/fs.js';
import { HttpError } from '../../src/web/http.js';
import { readTemplates, writeTemplate } from '../../src/web/templates.js';
import { CLAUDE_BIN } from '../helpers/claude.js';
import { agentbox } from '../helpers/cli.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

/**
 * A repository can carry links (git keeps them): `agentbox.yaml -> /dev/zero` was read until the
 * memory ran out (16 GB, then std::bad_alloc) by `agentbox trust` and `agentbox doctor`, the first
 * commands a person runs on a stranger's repository; a FIFO in such a place made a read wait for
 * good; and `.mcp.json -> ~/.ssh/id_rsa` was shown whole by `trust`, for review. agentbox reads its
 * configuration, settings and templates only from regular files, at most 1 MiB of each, and a
 * repository's own only from inside it (src/util/fs.ts readTextIfExists, readRepoText).
 */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function dir(): string {
  const d = tempDir('agentbox-hostile-files-');
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

describe('readTextIfExists', () => {
  it('reads a file, through a link too; a missing one is undefined', () => {
    const d = dir();
    fs.writeFileSync(path.join(d, 'real.yaml'), 'a: 1\n');
    fs.symlinkSync(path.join(d, 'real.yaml'), path.join(d, 'link.yaml'));
    expect(readTextIfExists(path.join(d, 'link.yaml'))).toBe('a: 1\n');
    expect(readTextIfExists(path.join(d, 'none.yaml'))).toBeUndefined();
  });

  it('refuses a device, a FIFO and a folder at once, naming the file; and more than its limit', () => {
    const d = dir();
    fs.symlinkSync('/dev/zero', path.join(d, 'zero.yaml'));
    execFileSync('mkfifo', [path.join(d, 'fifo.yaml')]);
    fs.mkdirSync(path.join(d, 'folder.yaml'));
    for (const name of ['zero.yaml', 'fifo.yaml', 'folder.yaml'])
      expect(() => readTextIfExists(path.join(d, name)), name).toThrow(`${name} is not a regular file`);
    fs.writeFileSync(path.join(d, 'big.yaml'), 'x'.repeat(2000));
    expect(() => readTextIfExists(path.join(d, 'big.yaml'), 1000)).toThrow(
      'is 2000 bytes: more than the 1000',
    );
  });
});

describe('readRepoText', () => {
  it('reads a file of the repository, through a link inside it too; refuses a link out of it', () => {
    const root = dir();
    const outside = path.join(dir(), 'id_rsa');
    fs.writeFileSync(outside, 'PRIVATE KEY\n');
    fs.mkdirSync(path.join(root, 'conf'));
    fs.writeFileSync(path.join(root, 'conf', 'real.json'), '{}\n');
    fs.symlinkSync('conf/real.json', path.join(root, 'inside.json'));
    fs.symlinkSync(outside, path.join(root, 'out.json'));
    fs.symlinkSync('/proc/self/environ', path.join(root, 'environ.json'));
    fs.symlinkSync('/nonexistent', path.join(root, 'broken.json'));
    expect(readRepoText(path.join(root, 'inside.json'), root)).toBe('{}\n');
    expect(readRepoText(path.join(root, 'broken.json'), root)).toBeUndefined();
    expect(() => readRepoText(path.join(root, 'out.json'), root)).toThrow('is a link out of the repository');
    expect(() => readRepoText(path.join(root, 'environ.json'), root)).toThrow(
      'is a link out of the repository',
    );
  });
});

describe('refuseWriteOut', () => {
  it('passes a path inside (a link inside too, a file not made yet, a broken link as the file); refuses one through a link out', () => {
    const root = dir();
    const outside = dir();
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync('real', path.join(root, 'inside'));
    fs.symlinkSync(outside, path.join(root, 'out'));
    fs.symlinkSync(path.join(outside, 'none'), path.join(root, 'broken'));
    for (const ok of ['real/a', 'inside/a', 'new/deeper/a', 'broken'])
      expect(() => refuseWriteOut(path.join(root, ok), root), ok).not.toThrow();
    for (const bad of ['out', 'out/a', 'out/deeper/a'])
      expect(() => refuseWriteOut(path.join(root, bad), root), bad).toThrow(
        `${path.join(root, bad)} leads out of the repository through a link (${path.join(root, 'out')} is ${fs.realpathSync(outside)})`,
      );
  });
});

describe("the page's template save (PUT /api/templates, project level)", () => {
  it('through a .agentbox folder linked out of the repository: a 409, nothing written or removed there', async () => {
    const root = dir();
    const outside = dir();
    fs.mkdirSync(path.join(outside, 'templates'));
    fs.writeFileSync(path.join(outside, 'templates', 'scout.input.md'), 'THEIRS\n');
    fs.symlinkSync(outside, path.join(root, '.agentbox'));
    const env = { HOME: dir() };
    for (const text of ['Look at it.\n', null]) {
      const error = await writeTemplate(root, env, { level: 'project', name: 'scout.input.md', text }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(409);
      expect((error as Error).message).toContain('leads out of the repository through a link');
    }
    expect(fs.readFileSync(path.join(outside, 'templates', 'scout.input.md'), 'utf8')).toBe('THEIRS\n');
    expect(fs.readdirSync(path.join(outside, 'templates'))).toEqual(['scout.input.md']);
  });
});

describe("the page's template list (GET /api/templates)", () => {
  it('does not read a project template that is a link out of the repository; says why; the person’s own link is read', () => {
    // Found by a user's eye: the editor showed /etc/passwd (or any file a clone's link names).
    const root = dir();
    const home = dir();
    fs.writeFileSync(path.join(home, 'secret'), 'SECRET-MATERIAL\n');
    fs.mkdirSync(path.join(root, '.agentbox', 'templates'), { recursive: true });
    fs.symlinkSync(path.join(home, 'secret'), path.join(root, '.agentbox', 'templates', 'output.md'));
    fs.writeFileSync(path.join(root, '.agentbox', 'templates', 'input.md'), 'the project’s words\n');
    fs.mkdirSync(path.join(home, '.config', 'agentbox', 'templates'), { recursive: true });
    fs.symlinkSync(
      path.join(home, 'secret'),
      path.join(home, '.config', 'agentbox', 'templates', 'input.md'),
    );
    const listed = readTemplates(root, { HOME: home });
    expect(JSON.stringify(listed.files.project)).not.toContain('SECRET-MATERIAL');
    expect(listed.files.project).toEqual([
      { name: 'input.md', text: 'the project’s words\n' },
      {
        name: 'output.md',
        text: '',
        error: expect.stringContaining('output.md is a link out of the repository'),
      },
    ]);
    expect(listed.files.global).toEqual([{ name: 'input.md', text: 'SECRET-MATERIAL\n' }]);
  });
});

describe("a repository's template", () => {
  it('as a link out of the repository is refused: a template is the prompt sent to the model', () => {
    const root = dir();
    const home = dir();
    fs.writeFileSync(path.join(home, 'secret'), 'SECRET-MATERIAL\n');
    fs.mkdirSync(path.join(root, '.agentbox', 'templates'), { recursive: true });
    fs.symlinkSync(path.join(home, 'secret'), path.join(root, '.agentbox', 'templates', 'input.md'));
    const dirs = templateDirs({ HOME: home }, root);
    expect(() => loadRunTemplates(dirs, 'scout', { builtinOutput: false })).toThrow(
      'input.md is a link out of the repository',
    );
    // The person's own templates may be links (a dotfile manager's).
    fs.rmSync(path.join(root, '.agentbox'), { recursive: true });
    fs.mkdirSync(path.join(home, '.config', 'agentbox', 'templates'), { recursive: true });
    fs.writeFileSync(path.join(home, 'mine.md'), 'my own words\n');
    fs.symlinkSync(
      path.join(home, 'mine.md'),
      path.join(home, '.config', 'agentbox', 'templates', 'input.md'),
    );
    expect(loadRunTemplates(dirs, 'scout', { builtinOutput: false }).globalInput?.body).toContain(
      'my own words',
    );
  });
});

describe('a cloned repository whose files are links to a device', () => {
  const repos: TestRepo[] = [];
  afterEach(() => {
    for (const r of repos.splice(0)) r.cleanup();
  });

  it('.gitignore -> a secret outside it: init refuses it, and writes nothing of it into the repository', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const home = dir();
    fs.writeFileSync(path.join(home, 'secret'), 'SECRET-MATERIAL\n');
    fs.rmSync(path.join(repo.dir, '.gitignore'), { force: true });
    fs.symlinkSync(path.join(home, 'secret'), path.join(repo.dir, '.gitignore'));
    repo.commit('plant .gitignore');
    const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    const result = await agentbox(['init'], { cwd: repo.dir, env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.gitignore is a link out of the repository');
    expect(fs.lstatSync(path.join(repo.dir, '.gitignore')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(home, 'secret'), 'utf8')).toBe('SECRET-MATERIAL\n');
  });

  // Measured on the build before: `.github -> <outside>` made `init --ci github` write
  // <outside>/workflows/agentbox.yml, outside the repository.
  it.each([
    ['github', '.github', '.github/workflows/agentbox.yml'],
    ['gitlab', '.gitlab', '.gitlab/agentbox.yml'],
  ])(
    'init --ci %s through a folder linked out of the repository: refused before anything is written',
    async (ci, link, file) => {
      const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const home = dir();
      const outside = dir();
      fs.symlinkSync(outside, path.join(repo.dir, link));
      repo.commit(`plant ${link}`);
      const before = repo.git('status', '--porcelain', '--ignored');
      const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
      const result = await agentbox(['init', '--ci', ci, '--agentbox-from', 'agentbox@0.1.0'], {
        cwd: repo.dir,
        env,
      });
      expect(result.code, result.stdout).not.toBe(0);
      expect(result.stderr).toContain(
        `${path.join(repo.dir, file)} leads out of the repository through a link`,
      );
      expect(result.stderr).toContain('nothing was changed');
      expect(fs.readdirSync(outside)).toEqual([]);
      // Nothing else was written either: no ledger, no settings, no agentbox.yaml.
      expect(repo.git('status', '--porcelain', '--ignored')).toBe(before);
    },
  );

  it(".gitignore -> .git/config: init refuses it; the clone's git config is left as it was", async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    fs.rmSync(path.join(repo.dir, '.gitignore'), { force: true });
    fs.symlinkSync('.git/config', path.join(repo.dir, '.gitignore'));
    repo.commit('plant .gitignore');
    const before = fs.readFileSync(path.join(repo.dir, '.git', 'config'), 'utf8');
    const home = dir();
    const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    const result = await agentbox(['init'], { cwd: repo.dir, env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.gitignore is a link out of the repository');
    expect(fs.readFileSync(path.join(repo.dir, '.git', 'config'), 'utf8')).toBe(before);
    // --local writes agentbox's own .git/info/exclude: that stays allowed.
    fs.rmSync(path.join(repo.dir, '.gitignore'));
    expect((await agentbox(['init', '--local'], { cwd: repo.dir, env })).code).toBe(0);
    expect(fs.readFileSync(path.join(repo.dir, '.git', 'info', 'exclude'), 'utf8')).toContain('.agents/');
  });

  it('uninstall with .gitignore linked out of the repository: refused, the file out there unchanged', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const home = dir();
    const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    expect((await agentbox(['init'], { cwd: repo.dir, env })).code).toBe(0);
    // The person's own file elsewhere that happens to hold the same lines, and the repository's link to it.
    const theirs = path.join(home, 'ignore');
    fs.renameSync(path.join(repo.dir, '.gitignore'), theirs);
    const before = fs.readFileSync(theirs, 'utf8');
    fs.symlinkSync(theirs, path.join(repo.dir, '.gitignore'));
    const result = await agentbox(['uninstall'], { cwd: repo.dir, env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.gitignore is a link out of the repository');
    expect(fs.readFileSync(theirs, 'utf8')).toBe(before);
  });

  it('a scout in a repository whose .claude/commands is a link out: refused, the run CRASHED at once, saying why', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const home = dir();
    const outside = dir();
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_STATE_HOME: path.join(home, 'state'),
      // Never started: the run stops before claude.
      AGENTBOX_CLAUDE_BIN: CLAUDE_BIN,
      ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdefghij',
    };
    expect((await agentbox(['init'], { cwd: repo.dir, env })).code).toBe(0);
    fs.mkdirSync(path.join(repo.dir, '.claude'), { recursive: true });
    fs.symlinkSync(outside, path.join(repo.dir, '.claude', 'commands'));
    repo.commit('plant .claude/commands');
    const result = await agentbox(['scout', 'what is a?'], { cwd: repo.dir, env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.claude/commands/run_');
    expect(result.stderr).toContain('leads out of the repository through a link');
    expect(fs.readdirSync(outside)).toEqual([]);
    const status = await agentbox(['status', '--json'], { cwd: repo.dir, env });
    const [run] = JSON.parse(status.stdout).runs ?? JSON.parse(status.stdout);
    expect(run.status).toBe('CRASHED');
    expect(status.stderr).not.toContain('supervisor');
  });

  it('a pipeline file linked out of the repository is not read (init --ci gitlab: .gitlab-ci.yml -> a secret)', async () => {
    const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const home = dir();
    fs.writeFileSync(path.join(home, 'secret'), 'SECRET-MATERIAL\n');
    fs.symlinkSync(path.join(home, 'secret'), path.join(repo.dir, '.gitlab-ci.yml'));
    repo.commit('plant .gitlab-ci.yml');
    const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    const result = await agentbox(['init', '--ci', 'gitlab', '--agentbox-from', 'agentbox@0.1.0'], {
      cwd: repo.dir,
      env,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.gitlab-ci.yml is a link out of the repository');
    expect(`${result.stdout}${result.stderr}`).not.toContain('SECRET-MATERIAL');
    expect(fs.readFileSync(path.join(home, 'secret'), 'utf8')).toBe('SECRET-MATERIAL\n');
  });

  for (const file of ['agentbox.yaml', '.claude/settings.json', '.mcp.json']) {
    it(`${file} -> a secret outside it: trust says so and shows nothing of it`, async () => {
      const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const home = dir();
      // Not JSON and not YAML that agentbox knows: trust used to show such a file whole, for review.
      fs.writeFileSync(path.join(home, 'secret'), '-----BEGIN PRIVATE KEY-----\nSECRET-MATERIAL\n');
      fs.mkdirSync(path.dirname(path.join(repo.dir, file)), { recursive: true });
      fs.symlinkSync(path.join(home, 'secret'), path.join(repo.dir, file));
      repo.commit(`plant ${file}`);
      const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
      const result = await agentbox(['trust'], { cwd: repo.dir, env });
      const out = `${result.stdout}${result.stderr}`;
      expect(result.code, out).not.toBe(0);
      expect(out).toContain('is a link out of the repository');
      expect(out).not.toContain('SECRET-MATERIAL');
    });

    // actions/checkout keeps the job's token in the clone's .git/config (http.<url>.extraheader).
    it(`${file} -> .git/config (the clone's token): trust and doctor refuse it and show nothing of it`, async () => {
      const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const at = path.join(repo.dir, file);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync(path.relative(path.dirname(at), path.join(repo.dir, '.git', 'config')), at);
      repo.commit(`plant ${file}`);
      repo.git('config', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic SECRET-TOKEN-XYZ');
      const home = dir();
      const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
      for (const command of [['trust'], ['doctor']]) {
        const result = await agentbox(command, { cwd: repo.dir, env });
        const out = `${result.stdout}${result.stderr}`;
        expect(out, `${command}`).toContain(`${path.basename(file)} is a link out of the repository`);
        expect(out, `${command}`).not.toContain('SECRET-TOKEN');
      }
    });

    it(`${file} as a link to /dev/zero, or a FIFO: trust, doctor and init say so and stop, at once`, async () => {
      const repo = gitRepo({ files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const at = path.join(repo.dir, file);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync('/dev/zero', at);
      repo.commit(`plant ${file}`);
      const home = dir();
      const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
      for (const [kind, said] of [
        ['link', 'is a link out of the repository'],
        ['fifo', 'is not a regular file'],
      ] as const) {
        if (kind === 'fifo') {
          fs.rmSync(at);
          execFileSync('mkfifo', [at]);
        }
        for (const command of [['trust'], ['doctor'], ['init']]) {
          const started = Date.now();
          const result = await agentbox(command, { cwd: repo.dir, env });
          const out = `${result.stdout}${result.stderr}`;
          expect(result.code, `${kind} ${command}: ${out}`).not.toBe(0);
          expect(out, `${kind} ${command}`).toContain(`${path.basename(file)} ${said}`);
          expect(Date.now() - started, `${kind} ${command}`).toBeLessThan(10_000);
        }
      }
    });
  }
});
