import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GITHUB_WORKFLOW_FILE } from '../../src/engines/files.js';
import { POD_INSTALL } from '../../src/engines/k8s.js';
import { CLAUDE_CODE_VERSION } from '../../src/engines/script.js';
import { VERSION } from '../../src/version.js';
import { text, tool } from '../fixtures/model-server/index.js';
import { REPO_ROOT, runAgentbox } from '../helpers/bin.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { publishClaudeCode, type Registry, startRegistry } from '../helpers/registry.js';

/**
 * Every install line agentbox writes installs something that exists, and what it installs runs:
 * the packed agentbox (`npm pack` → `npm publish`) on a real local registry (verdaccio, no uplink:
 * its dependencies laid in from npm's cache), and each line exactly as the generated GitHub
 * workflow, GitLab job, runner Dockerfile and Kubernetes Job hold it, run by a shell against that
 * registry into a prefix of its own; then `agentbox --version` from there. The GitLab job runs
 * whole under gitlab-ci-local (shell executor), by the recipe docs/ci.md gives for it: its install
 * (from a file:// tarball), the run, the push, and the laptop's `agentbox fetch`.
 * NOTE: Claude Code is a stand-in package that runs this clone's real CLI (test/helpers/registry.ts).
 */
const run = promisify(execFile);
let work: string;
let registry: Registry;
let tarball: string;

/** The registry's address of the packed agentbox: a tarball URL served by the test. */
const tarballUrl = () => `${registry.url}agentbox/-/agentbox-${VERSION}.tgz`;

beforeAll(async () => {
  work = tempDir('agentbox-install-');
  registry = await startRegistry(path.join(work, 'registry'));
  // NOTE: --ignore-scripts: `prepare` would rebuild dist/ (deleting it first) under the e2e files
  // running beside this one (see pack.test.ts); the suite has just built it.
  const packing = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...registry.env },
  });
  await publishClaudeCode(registry, CLAUDE_CODE_VERSION, work);
  const { stdout } = await packing;
  const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ filename: string }];
  tarball = path.join(work, filename);
  await registry.publish(tarball);
}, 120_000);

afterAll(async () => {
  await registry?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

interface Shell {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command run with the registry's npm settings, `extra` on top. */
function sh(argv: string[], extra: Record<string, string | undefined>, cwd = work): Promise<Shell> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env: Object.fromEntries(
        Object.entries({ PATH: process.env.PATH, HOME: work, ...registry.env, ...extra }).filter(
          (e): e is [string, string] => e[1] !== undefined,
        ),
      ),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 380_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const BASH = ['bash', '--noprofile', '--norc', '-eo', 'pipefail', '-c'];

/** Runs `line` with npm's global prefix in a folder of its own. */
async function installs(name: string, line: string, extra: Record<string, string> = {}, shell = BASH) {
  const prefix = path.join(work, `prefix-${name}`);
  const installed = await sh([...shell, line], { npm_config_prefix: prefix, ...extra });
  return { bin: path.join(prefix, 'bin'), installed };
}

async function versions(bin: string): Promise<{ agentbox: string; claude: string }> {
  const agentbox = await run(path.join(bin, 'agentbox'), ['--version']);
  const claude = await run(path.join(bin, 'claude'), ['--version']);
  return { agentbox: agentbox.stdout.trim(), claude: claude.stdout.trim() };
}

/** The Dockerfile's RUN that installs agentbox, as `docker build` runs it: /bin/sh -c, the ARGs in its environment. */
function dockerfileInstall(): { line: string; args: Record<string, string> } {
  const text = fs
    .readFileSync(path.join(REPO_ROOT, 'docker/runner/Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ');
  const line = text
    .split('\n')
    .find((l) => l.startsWith('RUN ') && l.includes('AGENTBOX_FROM'))!
    .slice(4);
  const args = Object.fromEntries([...text.matchAll(/^ARG (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  return { line, args };
}

/**
 * npm's cache is shared by every install here, as on a runner that keeps one. The first line warms
 * it; the others then take what the registry served from it (prefer-offline) instead of asking
 * again for each of ~70 packages: they run side by side, on a machine shared with other suites.
 */
const WARM = { npm_config_prefer_offline: 'true' };

describe('the install lines agentbox writes, run against a real registry', () => {
  it('GitHub: init --ci takes the default once the registry has it, and its line installs an agentbox that runs', async () => {
    const repo = gitRepo();
    try {
      const env = { PATH: process.env.PATH!, HOME: work, ...GIT_ENV, ...registry.env };
      const init = await runAgentbox(['init', '--ci', 'github'], { cwd: repo.dir, env });
      expect(init.stderr).toBe('');
      expect(init.code).toBe(0);
      expect(repo.read(GITHUB_WORKFLOW_FILE)).toContain(`# Installs agentbox from: agentbox@${VERSION} (`);
      const githubLine: string = parse(repo.read(GITHUB_WORKFLOW_FILE)).jobs.run.steps.find(
        (s: { name?: string }) => s.name === 'Install agentbox and Claude Code',
      ).run;
      expect(githubLine).toContain(`'agentbox@${VERSION}'`);
      const { installed, bin } = await installs('github', githubLine);
      expect(installed.code, installed.stderr).toBe(0);
      expect(await versions(bin)).toEqual({
        agentbox: VERSION,
        claude: expect.stringContaining(CLAUDE_CODE_VERSION),
      });
    } finally {
      repo.cleanup();
    }
  }, 400_000);

  it.concurrent('the Dockerfile (with and without its build arg) and the Kubernetes pod', async () => {
    const docker = dockerfileInstall();
    expect(docker.args).toEqual({ AGENTBOX_FROM: '', CLAUDE_CODE_VERSION });
    expect(fs.readFileSync(path.join(REPO_ROOT, 'docker/runner/Dockerfile'), 'utf8')).toMatch(
      /^FROM node:(22|24)-slim$/m,
    );
    const [fromDocker, dockerWithout, fromPod] = await Promise.all([
      // Its own npm cache, as an image build has: the line ends in `npm cache clean --force`, which
      // emptied the shared cache under the pod's and the GitLab job's installs (ENOTEMPTY, seen in CI).
      installs(
        'docker',
        docker.line,
        {
          ...docker.args,
          AGENTBOX_FROM: `agentbox@${VERSION}`,
          npm_config_cache: path.join(work, 'docker-npm-cache'),
        },
        ['sh', '-c'],
      ),
      installs('docker-no-arg', docker.line, docker.args, ['sh', '-c']),
      // The pod: the image's Claude Code stays; agentbox from AGENTBOX_FROM into its home.
      installs('pod', `${POD_INSTALL}command -v agentbox`, { ...WARM, AGENTBOX_FROM: tarballUrl() }),
    ]);
    expect(fromDocker.installed.code, fromDocker.installed.stderr).toBe(0);
    expect(await versions(fromDocker.bin)).toEqual({
      agentbox: VERSION,
      claude: expect.stringContaining(CLAUDE_CODE_VERSION),
    });
    expect(dockerWithout.installed.code).toBe(1);
    expect(dockerWithout.installed.stderr).toContain('docker build needs --build-arg AGENTBOX_FROM=');
    expect(fromPod.installed.code, fromPod.installed.stderr).toBe(0);
    const podAgentbox = fromPod.installed.stdout.trim().split('\n').at(-1)!;
    expect(podAgentbox).toBe(path.join(work, '.agentbox/bin/agentbox'));
    expect((await run(podAgentbox, ['--version'])).stdout.trim()).toBe(VERSION);
  }, 400_000);

  it.concurrent("GitLab: init with a file:// tarball, then docs/ci.md's recipe runs the job under gitlab-ci-local, and the laptop fetches the run; nothing of the person's git or npm changes", async () => {
    const p: Project = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    try {
      await gitlabEndToEnd(p);
    } finally {
      await p.cleanup();
    }
  }, 400_000);
});

/** The shell block of docs/ci.md "Trying the job on your machine", as a person would paste it. */
function tryGitlabRecipe(): string {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/ci.md'), 'utf8');
  const block = /<!-- try-gitlab:start -->\n```sh\n([\s\S]*?)```\n<!-- try-gitlab:end -->/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/ci.md has no <!-- try-gitlab:start --> sh block');
  return block;
}

/**
 * The laptop (the project) writes the job with a file:// source (a shell runner shares its disk),
 * then runs docs/ci.md's recipe as it stands: its stand-in origin, scratch checkout, gitlab-ci-local
 * run (the job's install from the file:// tarball, the run, its push) and `agentbox fetch`. The
 * person has a ~/.gitconfig and a global npm prefix of their own: both stay as they were.
 */
async function gitlabEndToEnd(p: Project): Promise<void> {
  const laptop = { ...p.env, ...registry.env };
  const init = await runAgentbox(['init', '--ci', 'gitlab', '--agentbox-from', `file://${tarball}`], {
    cwd: p.repo.dir,
    env: laptop,
  });
  expect(init.stderr).toBe('');
  expect(init.code).toBe(0);
  expect(init.stdout).toContain("Note: a path is read on the runner's own disk");
  p.repo.commit('agentbox in GitLab CI');

  p.server.setRules([
    {
      when: { turn: 0, anyText: 'add a CHANGELOG.md' },
      reply: (req) =>
        tool('Write', { file_path: path.join(req.workingDirectory!, 'CHANGELOG.md'), content: '# 0.1.0\n' }),
    },
    { when: { turn: 1, anyText: 'add a CHANGELOG.md' }, reply: text('Added CHANGELOG.md.') },
  ]);
  const personBin = path.join(work, 'person-bin');
  fs.mkdirSync(personBin);
  fs.symlinkSync(path.join(REPO_ROOT, 'bin/agentbox.cjs'), path.join(personBin, 'agentbox'));
  fs.symlinkSync(
    path.join(REPO_ROOT, 'node_modules/.bin/gitlab-ci-local'),
    path.join(personBin, 'gitlab-ci-local'),
  );
  const gitconfig = path.join(p.env.HOME!, '.gitconfig');
  fs.writeFileSync(
    gitconfig,
    '[user]\n\tname = A Person\n\temail = person@example.invalid\n[alias]\n\tst = status\n',
  );
  const before = fs.readFileSync(gitconfig);
  const tmp = path.join(work, 'person-tmp');
  fs.mkdirSync(tmp);
  const personPrefix = path.join(work, 'person-npm');
  const tried = await sh(
    [...BASH, tryGitlabRecipe()],
    {
      ...laptop,
      ...WARM,
      // The runner has what the job installs: no AGENTBOX_CLAUDE_BIN.
      AGENTBOX_CLAUDE_BIN: undefined,
      PATH: `${personBin}:${process.env.PATH}`,
      TMPDIR: tmp,
      npm_config_prefix: personPrefix,
    },
    p.repo.dir,
  );
  const log = `${tried.stdout}${tried.stderr}`;
  expect(tried.code, log).toBe(0);
  expect(log).toContain(`npm install --global --no-fund --no-audit 'file://${tarball}'`);
  expect(log).toMatch(/added \d+ packages/);
  expect(log).toContain('PASS  agentbox');
  const ci = path.join(tmp, fs.readdirSync(tmp).find((e) => fs.existsSync(path.join(tmp, e, 'checkout')))!);
  expect((await versions(path.join(ci, 'npm/bin'))).agentbox).toBe(VERSION);
  const published = log.match(/published (\S+) to origin/)?.[1];
  expect(published, log).toBeDefined();
  expect(tried.stdout).toContain('try-ci: 1 published run(s) — 1 new');
  expect(tried.stdout).toContain(published!);

  // The person's own git config is byte-identical: the job's `git config --global` went to the
  // scratch file. The job's global npm install went to the scratch prefix, not the person's.
  expect(fs.readFileSync(gitconfig).equals(before), fs.readFileSync(gitconfig, 'utf8')).toBe(true);
  expect(fs.readFileSync(path.join(ci, 'gitconfig'), 'utf8')).toContain('[credential]\n\thelper = ');
  expect(fs.existsSync(personPrefix)).toBe(false);
  const diff = await p.agentbox(['diff', published!.slice(-6)]);
  expect(diff.stdout).toContain('CHANGELOG.md');
  // No container around the job here: the recipe asks for the sandbox back.
  const show = await p.agentbox(['show', published!.slice(-6)]);
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).not.toContain('no kernel fence');
  await expectNoProcessesLeft(p.tag);
}

describe('before anything is on the registry', () => {
  it('npm publish --dry-run is clean and packs only what agentbox needs; init --ci without a source stops', async () => {
    await run('npm', ['unpublish', `agentbox@${VERSION}`, '--force'], {
      env: { ...process.env, ...registry.env },
    });
    try {
      const dry = await sh(['npm', 'publish', '--dry-run', '--json', '--ignore-scripts'], {}, REPO_ROOT);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).not.toMatch(/npm (warn|WARN)/);
      const report = JSON.parse(dry.stdout.slice(dry.stdout.indexOf('{')));
      const files: string[] = (report.agentbox ?? report).files.map((f: { path: string }) => f.path);
      const top = [...new Set(files.map((f) => (f.includes('/') ? `${f.split('/')[0]}/` : f)))].sort();
      expect(top).toEqual([
        'LICENSE',
        'README.md',
        'bin/',
        'dist/',
        'docker/',
        'docs/',
        'hooks/',
        'package.json',
        'templates/',
        'web/',
      ]);
      expect(files.filter((f) => f.endsWith('.map') || f.endsWith('.ts'))).toEqual([]);
      expect(files.filter((f) => f.startsWith('docker/'))).toEqual(['docker/runner/Dockerfile']);
      const docs = files.filter((f) => f.startsWith('docs/'));
      expect(docs).toContain('docs/ci.md');
      for (const internal of ['docs/internals.md', 'docs/benchmarks.md', 'docs/fault-tests.md'])
        expect(docs).not.toContain(internal);

      const repo: TestRepo = gitRepo();
      try {
        const env = { PATH: process.env.PATH!, HOME: work, ...GIT_ENV, ...registry.env };
        const missing = await runAgentbox(['init', '--ci', 'github'], { cwd: repo.dir, env });
        expect(missing.code).toBe(2);
        expect(missing.stderr).toContain(`agentbox@${VERSION} is not on the npm registry this machine uses`);
        expect(missing.stderr).toContain('(E404)');
        expect(missing.stderr).toContain('--agentbox-from');
        expect(repo.exists(GITHUB_WORKFLOW_FILE)).toBe(false);
        // A git URL is taken as given (the runner reaches it, not necessarily this machine).
        const head = (await run('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT })).stdout.trim();
        const gitUrl = `git+file://${REPO_ROOT}#${head}`;
        const fromGit = await runAgentbox(['init', '--ci', 'github', '--agentbox-from', gitUrl], {
          cwd: repo.dir,
          env,
        });
        expect(fromGit.code, fromGit.stderr).toBe(0);
        expect(repo.read(GITHUB_WORKFLOW_FILE)).toContain(
          `npm install --global --no-fund --no-audit '${gitUrl}'`,
        );
      } finally {
        repo.cleanup();
      }
    } finally {
      await registry.publish(tarball);
    }
  }, 120_000);
});
