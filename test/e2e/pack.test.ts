import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, startModelServer, text } from '../fixtures/model-server/index.js';
import { REPO_ROOT, runAgentbox } from '../helpers/bin.js';
import {
  CLAUDE_BIN,
  claudeEnv,
  claudeHome,
  prepareInteractiveConfig,
  TEST_API_KEY,
} from '../helpers/claude.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';
import { type Project, project, trustAsIs } from '../helpers/project.js';
import { sleep, startPty, waitFor } from '../helpers/pty.js';
import { playReadmeTour, TOUR_FILES } from '../helpers/readme-tour.js';
import { request, startUi } from '../helpers/ui.js';

/**
 * The published shape, installed as a machine without build tools installs it (issue 38): `npm
 * pack`, then npm with a PATH of only node, npm, git, sh and coreutils (scripts/bare-path.sh: no
 * python, make or compiler) and no node headers (`nodedir` points nowhere, HOME is empty). Into a
 * project (`npx agentbox`), and globally with docker/runner/Dockerfile's own install line (agentbox
 * and the Claude Code it was measured with). Then the README tour and one `agentbox start` session
 * run on what was installed: its agentbox, its node-pty, its claude. On the line `npm test` runs
 * on, and in the smoke subset on the other two (.ci/run).
 * Catches a dependency that compiles, a missing `files` entry, a dependency left in
 * devDependencies, a broken bin.
 */
describe('npm pack, installed without a compiler', () => {
  const dir = tempDir('agentbox-pack-');
  const bare = path.join(dir, 'bare-bin');
  const prefix = path.join(dir, 'global');
  let tarball = '';
  let files: string[] = [];
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  /** npm as the bare machine runs it: its own PATH and HOME, the registry reached as here. */
  const bareEnv = () => ({
    ...(process.env as Record<string, string>),
    PATH: bare,
    HOME: tempDir('agentbox-pack-home-'),
    npm_config_cache: cache,
    npm_config_prefer_offline: 'true',
    npm_config_nodedir: path.join(dir, 'no-node-headers'),
    npm_config_prefix: prefix,
  });

  beforeAll(() => {
    // NOTE: --ignore-scripts: `prepare` would rebuild dist/ (deleting it first) under the e2e
    // files running beside this one; `npm test` has just built it.
    const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [result] = JSON.parse(packed.slice(packed.indexOf('['))) as [
      { filename: string; files: { path: string }[] },
    ];
    tarball = path.join(dir, result.filename);
    files = result.files.map((f) => f.path);
    execFileSync('bash', [path.join(REPO_ROOT, 'scripts/bare-path.sh'), bare]);
  });

  it('the bare PATH has no python, make or compiler', () => {
    const found = ['python3', 'python', 'make', 'cc', 'gcc', 'g++', 'c++'].filter((tool) =>
      fs.existsSync(path.join(bare, tool)),
    );
    expect(found).toEqual([]);
    for (const tool of ['node', 'npm', 'npx', 'git', 'sh', 'cp'])
      expect(fs.existsSync(path.join(bare, tool)), `${tool} in the bare PATH`).toBe(true);
    // npm there runs on the node that runs the tests (the line under test).
    const version = execFileSync('sh', ['-c', 'node --version'], { env: { PATH: bare }, encoding: 'utf8' });
    expect(version.trim()).toBe(process.version);
  });

  it('holds what it needs, the runner image included', () => {
    expect(files).toContain('bin/agentbox.cjs');
    expect(files).toContain('bin/code-cache.cjs');
    expect(files.filter((p) => p.startsWith('.v8-cache'))).toEqual([]);
    expect(files).toContain('dist/cli/main.cjs');
    expect(files).toContain('dist/web/app.js');
    expect(files).toContain('dist/resident/client.cjs');
    expect(files).toContain('README.md');
    expect(files).toContain('docker/runner/Dockerfile');
    expect(files.filter((p) => p.startsWith('test/') || p.startsWith('src/'))).toEqual([]);
    const web = fs.readdirSync(path.join(REPO_ROOT, 'web')).map((name) => `web/${name}`);
    expect(files.filter((p) => p.startsWith('web/')).sort()).toEqual(web.sort());
  });

  it('installs into a project, runs with npx and serves the whole page', async () => {
    const consumer = path.join(dir, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), '{ "name": "consumer", "private": true }\n');
    const npm = (args: string[]) =>
      execFileSync('npm', args, { cwd: consumer, encoding: 'utf8', stdio: 'pipe', env: bareEnv() });
    npm(['install', tarball, '--no-audit', '--no-fund']);
    expect(npm(['exec', '--', 'agentbox', '--help'])).toContain('Usage: agentbox');

    const repo = gitRepo();
    const bin = path.join(consumer, 'node_modules/.bin/agentbox');
    const out = execFileSync(bin, ['init'], {
      cwd: repo.dir,
      encoding: 'utf8',
      env: { ...process.env, ...GIT_ENV },
    });
    expect(out).toContain('agentbox is set up');
    expect(fs.existsSync(path.join(repo.dir, '.agents/runs'))).toBe(true);
    // The chunks init loaded are in V8's code cache, inside the installed package (bin/code-cache.cjs).
    const installed = path.join(consumer, 'node_modules/agentbox');
    const cached = fs.readdirSync(path.join(installed, '.v8-cache'));
    expect(cached.some((name) => name.startsWith('main.cjs.'))).toBe(true);
    // The installed UI serves every module of the page, and diff2html from its own dependency; its
    // entry is the build's bundle of the modules (scripts/bundle.mjs), with nothing to preload.
    const home = tempDir('agentbox-pack-home-');
    const env = { ...(process.env as Record<string, string>), ...GIT_ENV, HOME: home, XDG_STATE_HOME: home };
    const ui = await startUi(repo.dir, env, [], path.join(installed, 'bin/agentbox.cjs'));
    try {
      const web = files.filter((p) => p.startsWith('web/') && /\.(js|css)$/.test(p));
      for (const asset of [...web.map((p) => p.slice('web/'.length)), 'diff2html.js', 'diff2html.css']) {
        const answer = await request(ui.port, `/assets/${asset}`);
        expect(answer.status, asset).toBe(200);
        const source = asset === 'app.js' ? 'dist/web/app.js' : `web/${asset}`;
        if (!asset.startsWith('diff2html'))
          expect(answer.text, asset).toBe(fs.readFileSync(path.join(REPO_ROOT, source), 'utf8'));
      }
      const entry = (await request(ui.port, '/assets/app.js')).text;
      expect(entry).toContain('function showRun(');
      expect(entry).not.toMatch(/^import /m);
      const page = await request(ui.port, '/', { headers: { authorization: `Bearer ${ui.token}` } });
      expect(page.text).toContain('<script type="module" src="/assets/app.js">');
      expect(page.text).not.toContain('modulepreload');
    } finally {
      await ui.stop();
    }
    // Off, nothing more is written.
    fs.rmSync(path.join(installed, '.v8-cache'), { recursive: true });
    execFileSync(bin, ['--help'], { env: { ...process.env, AGENTBOX_CODE_CACHE: '0' } });
    expect(fs.existsSync(path.join(installed, '.v8-cache'))).toBe(false);
  }, 240_000);

  it('installed into the project it works on: a fix run runs its setup and verify in the sandbox (the runtime beside agentbox in node_modules)', async () => {
    const consumer = path.join(dir, 'consumer');
    const tag = newTestTag();
    const server = await startModelServer([
      { when: { anyText: 'PACK-FIX', turn: 0 }, reply: bash('echo more >> notes.txt') },
      { when: { anyText: 'PACK-FIX' }, reply: text('added') },
    ]);
    const home = claudeHome();
    try {
      const env = {
        ...claudeEnv({
          home,
          modelUrl: server.url,
          extra: { AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag },
        }),
        ...GIT_ENV,
        AGENTBOX_CLAUDE_BIN: CLAUDE_BIN,
      };
      const git = (...args: string[]) => execFileSync('git', args, { cwd: consumer, env, stdio: 'pipe' });
      fs.writeFileSync(path.join(consumer, '.gitignore'), 'node_modules/\n');
      fs.writeFileSync(path.join(consumer, 'notes.txt'), 'first\n');
      git('init', '-q');
      git('add', '-A');
      git('commit', '-qm', 'the project');
      const agentbox = (args: string[]) => {
        trustAsIs(consumer, env);
        return runAgentbox(args, {
          cwd: consumer,
          env,
          bin: path.join(consumer, 'node_modules/agentbox/bin/agentbox.cjs'),
        });
      };
      expect((await agentbox(['init'])).code).toBe(0);
      fs.writeFileSync(
        path.join(consumer, 'agentbox.yaml'),
        'runs:\n  setup: echo setup-ran\n  verify: grep -q more notes.txt\n',
      );
      git('add', '-A');
      git('commit', '-qm', 'agentbox');
      const fix = await agentbox(['fix', 'PACK-FIX add a line']);
      expect(fix.code, fix.stdout + fix.stderr).toBe(0);
      const runs = path.join(consumer, '.agents/runs');
      const name = fs.readdirSync(runs).find((n) => fs.existsSync(path.join(runs, n, 'state.json')))!;
      const state = JSON.parse(fs.readFileSync(path.join(runs, name, 'state.json'), 'utf8'));
      expect(state.status).toBe('REVIEW');
      expect(fs.readFileSync(path.join(runs, name, 'raw/setup.log'), 'utf8')).toContain('setup-ran');
      expect(fix.stdout + fix.stderr).toMatch(/verify passed/);
    } finally {
      killTagged(tag);
      await server.close();
      home.cleanup();
    }
  }, 240_000);

  describe("installed globally by the runner image's own install line", () => {
    const installedBin = path.join(prefix, 'lib/node_modules/agentbox/bin/agentbox.cjs');
    const claudeBin = path.join(prefix, 'bin/claude');
    beforeAll(() => {
      const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'docker/runner/Dockerfile'), 'utf8');
      const line = /npm install --global [^\n&\\]*/.exec(dockerfile)![0].trim();
      const version = /^ARG CLAUDE_CODE_VERSION=(\S+)$/m.exec(dockerfile)![1];
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's shell expansion, as written there
      expect(line).toContain('"${AGENTBOX_FROM}"');
      // The shell expands the line's ${…} as docker's RUN does, from the build args.
      execFileSync('sh', ['-c', line], {
        cwd: dir,
        stdio: 'pipe',
        env: { ...bareEnv(), AGENTBOX_FROM: tarball, CLAUDE_CODE_VERSION: version },
      });
    }, 240_000);

    it('compiled nothing, and its node-pty and claude work', async () => {
      const pty = path.join(prefix, 'lib/node_modules/agentbox/node_modules/@lydell/node-pty');
      expect(fs.existsSync(path.join(pty, 'build'))).toBe(false);
      expect(execFileSync(claudeBin, ['--version'], { encoding: 'utf8' })).toContain('(Claude Code)');
      const repo = gitRepo();
      const doctor = await runAgentbox(['doctor'], {
        cwd: repo.dir,
        env: { ...process.env, ...GIT_ENV } as Record<string, string>,
        bin: installedBin,
      });
      expect(doctor.stdout).toContain('✓ pty              node-pty works');
    });

    describe('and then', () => {
      let p: Project;
      beforeAll(async () => {
        p = await project({ files: TOUR_FILES, bin: installedBin, claudeBin });
      });
      afterAll(async () => p?.cleanup());

      it('the README tour runs as the README shows', async () => {
        await playReadmeTour(p);
      }, 300_000);

      it('one agentbox start session: typed input and inject reach the model, stop ends it', async () => {
        prepareInteractiveConfig({
          configDir: p.home.configDir,
          projectDirs: [p.repo.dir],
          apiKey: TEST_API_KEY,
        });
        p.server.setRules([
          { when: { lastUserText: 'hello from the installed pty' }, reply: text('INSTALLED-REPLY') },
          { when: { lastUserText: 'a note from agentbox inject' }, reply: text('INJECT-REPLY') },
        ]);
        const before = p.runs().length;
        const s = startPty(['start'], { cwd: p.repo.dir, env: p.env, bin: installedBin });
        const context = () => `--- terminal ---\n${s.output().slice(-3000)}`;
        try {
          await waitFor(() => p.runs().length > before, 'the session run', { context });
          const name = p.newest();
          const idle = async () => {
            const r = await p.agentbox(['state', name, '--json']);
            return r.code === 0 && JSON.parse(r.stdout).idle === true;
          };
          await waitFor(idle, 'claude to be idle', { context });
          // Claude Code queries the terminal after its first prompt: type once the screen is quiet.
          await sleep(1500);
          await s.type('hello from the installed pty');
          await waitFor(() => s.output().includes('INSTALLED-REPLY'), 'the reply on screen', { context });
          const injected = await p.agentbox(['inject', name, 'a note from agentbox inject']);
          expect(injected.code, injected.stderr).toBe(0);
          await waitFor(() => s.output().includes('INJECT-REPLY'), 'the injected turn answered', { context });
          const stopped = await p.agentbox(['stop', name]);
          expect(stopped.code, stopped.stderr).toBe(0);
          expect(await s.exited).toBe(0);
          expect(p.state(name).status).toBe('DONE');
          await expectNoProcessesLeft(p.tag);
        } finally {
          s.kill();
        }
      }, 120_000);
    });
  });
});
