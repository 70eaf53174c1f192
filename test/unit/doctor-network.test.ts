import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import {
  allowedBy,
  hostOf,
  installerOf,
  lockfileHosts,
  manifestHosts,
  npmRegistry,
  setupDomainsLine,
} from '../../src/doctor/installs.js';
import { engineNote, nodeLineResult } from '../../src/doctor/node-line.js';
import { checkSetup, simpleCommands } from '../../src/doctor/setup.js';
import { commandRegistry, headReader, installNeeds, networkVerdict } from '../../src/doctor/setup-network.js';
import { findRepo } from '../../src/git/repo.js';
import { nextAction } from '../../src/present/next-step.js';
import { setupFailure } from '../../src/run/begin/setup-step.js';
import { refusedHosts } from '../../src/sandbox/refused-hosts.js';
import { agentbox } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

/** Issue 38, item 5: doctor knows what runs.setup's installs download, and from where. */
describe('installs: which commands, which hosts', () => {
  it.each([
    ['npm install', 'npm'],
    ['npm i', 'npm'],
    ['npm ci --no-audit', 'npm'],
    ['npm', 'npm'],
    ['npm test', null],
    ['npm run build', null],
    ['pnpm install --frozen-lockfile', 'pnpm'],
    ['yarn', 'yarn'],
    ['yarn install --immutable', 'yarn'],
    ['yarn test', null],
    ['bun install', 'bun'],
    ['pip install -r requirements.txt', 'pip'],
    ['python3 -m pip install .', 'pip'],
    ['pip install --no-index --find-links wheels .', null],
    ['uv sync', 'uv'],
    ['poetry install', 'poetry'],
    ['cargo build', 'cargo'],
    ['cargo build --offline', null],
    ['make deps', null],
  ])('installerOf(%j) → %s', (command, name) => {
    expect(installerOf(command)?.name ?? null).toBe(name);
  });

  it.each([
    ['https://registry.npmjs.org/dequal/-/dequal-2.0.3.tgz', 'registry.npmjs.org'],
    ['git+ssh://git@github.com/lukeed/dequal.git#abc', 'github.com'],
    ['registry+https://github.com/rust-lang/crates.io-index', 'github.com'],
    ['sparse+https://cargo.example.com/index/', 'cargo.example.com'],
    ['https://npm.corp.example:4873/', 'npm.corp.example'],
    ['file:../lib', null],
    ['^2.0.3', null],
  ])('hostOf(%j) → %s', (url, host) => {
    expect(hostOf(url)).toBe(host);
  });

  it('npm’s registry: the project’s .npmrc wins over the default', () => {
    expect(npmRegistry(null, ['registry.npmjs.org'])).toEqual(['registry.npmjs.org']);
    expect(npmRegistry('# x\nregistry=https://npm.corp.example/\n', ['registry.npmjs.org'])).toEqual([
      'npm.corp.example',
    ]);
  });

  it.each([
    ['no dependencies', { name: 'x' }, []],
    ['registry dependencies', { dependencies: { dequal: '^2.0.3' } }, ['registry.npmjs.org']],
    ['dev only', { devDependencies: { vitest: '^4' } }, ['registry.npmjs.org']],
    ['a local one', { dependencies: { lib: 'file:../lib' } }, []],
    [
      'GitHub and a tarball',
      { dependencies: { a: 'lukeed/dequal', b: 'https://files.example/b.tgz' } },
      ['github.com', 'codeload.github.com', 'files.example'],
    ],
  ])('manifestHosts: %s', (_label, pkg, hosts) => {
    expect(manifestHosts(JSON.stringify(pkg), ['registry.npmjs.org'])).toEqual(hosts);
  });

  const lock = (packages: Record<string, object>) =>
    JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'x' }, ...packages } });
  it.each([
    ['package-lock.json', lock({}), []],
    [
      'package-lock.json',
      lock({
        'node_modules/dequal': {
          resolved: 'https://registry.npmjs.org/dequal/-/dequal-2.0.3.tgz',
          funding: { url: 'https://github.com/sponsors/x' },
        },
        'node_modules/lib': { resolved: 'file:../lib' },
        'node_modules/ws': { link: true },
      }),
      ['registry.npmjs.org'],
    ],
    ['package-lock.json', lock({ 'node_modules/a': { version: '1.0.0' } }), ['registry.example']],
    [
      'yarn.lock',
      'dequal@^2.0.3:\n  version "2.0.3"\n  resolved "https://registry.yarnpkg.com/dequal/-/dequal-2.0.3.tgz#abc"\n',
      ['registry.yarnpkg.com'],
    ],
    ['pnpm-lock.yaml', '  dequal@2.0.3:\n    resolution: {integrity: sha512-x}\n', ['registry.example']],
    ['bun.lock', '{ "packages": { "dequal": ["dequal@2.0.3", "", {}, "sha512-x"] } }', ['registry.example']],
    [
      'Cargo.lock',
      '[[package]]\nname = "serde"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
      ['registry.example'],
    ],
    [
      'uv.lock',
      '[[package]]\nname = "idna"\nsource = { registry = "https://pypi.org/simple" }\nsdist = { url = "https://files.pythonhosted.org/p/idna.tar.gz" }\n',
      ['pypi.org', 'files.pythonhosted.org'],
    ],
  ])('lockfileHosts(%s) → %j', (file, text, hosts) => {
    expect(lockfileHosts(file, text, ['registry.example'])).toEqual(hosts);
  });

  it('allowedBy: exact names, and *.example.com for its subdomains', () => {
    expect(allowedBy('registry.npmjs.org', ['registry.npmjs.org'])).toBe(true);
    expect(allowedBy('registry.npmjs.org', ['*.npmjs.org'])).toBe(true);
    expect(allowedBy('npmjs.org', ['*.npmjs.org'])).toBe(false);
    expect(allowedBy('evilregistry.npmjs.org.example', ['registry.npmjs.org'])).toBe(false);
  });

  it('the line to write keeps what runs.setup_domains already has', () => {
    expect(setupDomainsLine([], ['registry.npmjs.org'])).toBe('setup_domains: [registry.npmjs.org]');
    expect(setupDomainsLine(['a.example'], ['registry.npmjs.org'])).toBe(
      'setup_domains: [a.example, registry.npmjs.org]',
    );
  });

  it('pip: --index-url replaces PyPI, --extra-index-url adds to it', () => {
    const pypi = ['pypi.org', 'files.pythonhosted.org'];
    expect(commandRegistry('pip install .', pypi)).toEqual(pypi);
    expect(commandRegistry('pip install -i https://pip.corp.example/simple .', pypi)).toEqual([
      'pip.corp.example',
    ]);
    expect(commandRegistry('pip install --extra-index-url=https://x.example/simple .', pypi)).toEqual([
      ...pypi,
      'x.example',
    ]);
  });
});

describe('runs.setup against its network, on a real repository (files read at HEAD)', () => {
  const config = (setup: string, setup_domains: string[] = [], allowed_domains: string[] = []) => ({
    ...DEFAULT_CONFIG,
    runs: { ...DEFAULT_CONFIG.runs, setup, setup_domains },
    sandbox: { ...DEFAULT_CONFIG.sandbox, allowed_domains },
  });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

  it('npm install, dependencies, no lockfile, no runs.setup_domains: a failure naming the host and the line', async () => {
    const repo = gitRepo({ files: { 'package.json': '{"dependencies":{"dequal":"^2.0.3"}}\n' } });
    const found = await findRepo(repo.dir);
    const result = await checkSetup(found, env, config('npm install'));
    expect(result.ok).toBe(false);
    expect(result.detail).toBe(
      "runs.setup: npm install downloads from registry.npmjs.org (package.json, no lockfile committed), and the sandbox's network allowlist lets the setup reach no host: the sandbox's proxy would refuse registry.npmjs.org (E403)",
    );
    expect(result.fix).toContain('under runs:, write  setup_domains: [registry.npmjs.org]  ');
    // Allowed: the check passes and says what it checked, and no lockfile is claimed.
    const ok = await checkSetup(found, env, config('npm install', ['registry.npmjs.org']));
    expect(ok).toMatchObject({ ok: true });
    expect(ok.detail).toBe(
      "runs.setup: programs found on the run's PATH; npm install reaches registry.npmjs.org (package.json, no lockfile committed), allowed (not run)",
    );
    expect(ok.detail).not.toContain('lockfiles committed');
  });

  it('a lockfile names the hosts; a sub-folder after cd; sandbox.allowed_domains counts too', async () => {
    const lockfile = JSON.stringify({
      lockfileVersion: 3,
      packages: {
        '': {},
        'node_modules/a': { resolved: 'https://npm.corp.example/a/-/a-1.0.0.tgz' },
      },
    });
    const repo = gitRepo({ files: { 'web/package.json': '{}\n', 'web/package-lock.json': lockfile } });
    const read = headReader(repo.dir);
    const needs = await installNeeds(simpleCommands('cd web && npm ci'), read);
    expect(needs).toEqual([
      { command: 'npm ci', source: 'web/package-lock.json', hosts: ['npm.corp.example'] },
    ]);
    expect(networkVerdict(needs, config('x', [], ['npm.corp.example'])).ok).toBe(true);
    const refused = networkVerdict(needs, config('x', ['registry.npmjs.org']));
    expect(refused.ok).toBe(false);
    expect(refused.fix).toContain('setup_domains: [registry.npmjs.org, npm.corp.example]');
  });

  it('nothing to download, an unknown command, the sandbox off: passes, saying what was not checked', async () => {
    const lock = JSON.stringify({ lockfileVersion: 3, packages: { '': {} } });
    const repo = gitRepo({ files: { 'package.json': '{}\n', 'package-lock.json': lock } });
    const found = await findRepo(repo.dir);
    const ci = await checkSetup(found, env, config('npm ci'));
    expect(ci.ok).toBe(true);
    expect(ci.detail).toContain('lockfiles committed; npm ci: nothing to download (package-lock.json)');
    const unknown = await checkSetup(found, env, config('true'));
    expect(unknown.detail).toContain('no install agentbox recognises in runs.setup');
    const off = {
      ...config('npm install'),
      sandbox: { ...DEFAULT_CONFIG.sandbox, mode: 'off' as const },
    };
    expect((await checkSetup(found, env, off)).detail).toContain('not fenced (sandbox.mode: off)');
  });

  it('runs.setup runs in the sandbox runtime, which needs ripgrep on Linux: not found, not passed', async () => {
    const repo = gitRepo({ files: { 'package.json': '{}\n' } });
    // node alone on PATH (its own folder may hold rg too, as /usr/bin does).
    const bin = tempDir('agentbox-node-only-');
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const result = await checkSetup(
      await findRepo(repo.dir),
      { PATH: `${bin}:/nonexistent` },
      config('node -v'),
    );
    if (process.platform !== 'linux') return;
    expect(result).toMatchObject({ ok: false });
    expect(result.detail).toContain(
      'ripgrep (rg) is not installed, which the sandbox runtime that runs runs.setup',
    );
  });

  it('the sandbox runtime finds its programs with `which`: without it, not passed, and the fix names it (found by QA: "bubblewrap not installed" though it was)', async () => {
    if (process.platform !== 'linux') return;
    const repo = gitRepo({ files: { 'package.json': '{}\n' } });
    const bin = tempDir('agentbox-no-which-');
    for (const name of ['node', 'rg', 'bwrap', 'socat']) {
      const real = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      fs.symlinkSync(real, path.join(bin, name));
    }
    const found = await findRepo(repo.dir);
    const without = await checkSetup(found, { PATH: bin }, config('node -v'));
    expect(without).toMatchObject({ ok: false });
    expect(without.detail).toContain('the `which` command is not installed');
    fs.symlinkSync(
      execFileSync('sh', ['-c', 'command -v which'], { encoding: 'utf8' }).trim(),
      path.join(bin, 'which'),
    );
    expect((await checkSetup(found, { PATH: bin }, config('node -v'))).detail).not.toContain('`which`');
  });

  it('a repository’s hosts are a stranger’s text: one that is no host name is not a host, and doctor prints every check as one clean line', async () => {
    // Found by a user's eye: the OSC 52 (write the clipboard) and OSC 0 (the window's title) below
    // reached the terminal through doctor's setup line and its fix, as they were.
    const osc = 'r\x1b]52;c;aGk=\x07eg.example';
    expect(hostOf(`https://${osc}/`)).toBeNull();
    expect(hostOf('https://ev\x1b]0;t\x07il.example/a.tgz')).toBeNull();
    expect(hostOf('https://a b.example/')).toBeNull();
    expect(hostOf('https://npm.corp-1.example/x')).toBe('npm.corp-1.example');
    expect(hostOf('git+ssh://git@github.com/a/b.git')).toBe('github.com');
    expect(hostOf('https://10.0.0.7/x')).toBe('10.0.0.7');
    expect(npmRegistry(`registry=https://${osc}/\n`, ['registry.npmjs.org'])).toEqual(['registry.npmjs.org']);
    const hostile = JSON.stringify({
      lockfileVersion: 3,
      packages: {
        '': {},
        'node_modules/a': { resolved: 'https://ev\x1b]0;dr\x07il.example\x1b[2J/a.tgz' },
        'node_modules/b': { resolved: 'https://npm.corp.example/b.tgz' },
      },
    });
    expect(lockfileHosts('package-lock.json', hostile, ['registry.example'])).toEqual(['npm.corp.example']);
    // The whole command, as a person runs it on a clone: their own runs.setup, the clone's files.
    for (const files of <Record<string, string>[]>[
      { 'package.json': '{"dependencies":{"left-pad":"1"}}\n', '.npmrc': `registry=https://${osc}/\n` },
      { 'package.json': '{}\n', 'package-lock.json': hostile },
    ]) {
      const repo = gitRepo({ files });
      const home = tempDir('agentbox-doctor-home-');
      fs.mkdirSync(path.join(home, '.config', 'agentbox'), { recursive: true });
      fs.writeFileSync(
        path.join(home, '.config', 'agentbox', 'config.yaml'),
        'runs:\n  setup: npm install\n',
      );
      await agentbox(['init'], { cwd: repo.dir, env: { PATH: env.PATH, HOME: home } });
      const doctor = await agentbox(['doctor'], { cwd: repo.dir, env: { PATH: env.PATH, HOME: home } });
      const setupLine = doctor.stdout.split('\n').find((l) => l.includes('runs.setup'));
      expect(setupLine, doctor.stdout).toMatch(/npm install (downloads from|reaches) /);
      expect(doctor.stdout + doctor.stderr).not.toMatch(/[\x07\x1b]/);
      expect(doctor.stdout).not.toContain('eg.example');
      fs.rmSync(home, { recursive: true, force: true });
      repo.cleanup();
    }
  });

  it('a lockfile only in the working tree is not in a fix run’s worktree', async () => {
    const repo = gitRepo({ files: { 'package.json': '{"dependencies":{"a":"1"}}\n' } });
    fs.writeFileSync(path.join(repo.dir, 'package-lock.json'), JSON.stringify({ packages: { '': {} } }));
    const result = await checkSetup(await findRepo(repo.dir), env, config('npm install'));
    expect(result.ok).toBe(false);
    expect(result.detail).toContain('no lockfile committed');
  });
});

describe('the Node line doctor runs on (issue 38, item 13)', () => {
  const at = (day: string) => new Date(`${day}T12:00:00Z`);
  it.each([
    ['24.11.1', '2026-11-28', 'ok', 'Node 24.11.1: line 24 is supported until 2028-04-30'],
    ['22.12.0', '2026-11-28', 'ok', 'Node 22.12.0: line 22 is supported until 2027-04-30'],
    ['22.12.0', '2027-02-28', 'ok', '61 day(s) left: plan the move (move to Node 24)'],
    ['20.20.2', '2026-04-30', 'ok', 'line 20 is supported until 2026-04-30'],
    ['20.20.2', '2026-05-01', 'warn', 'line 20 reached its end of life on 2026-04-30'],
    ['22.12.0', '2027-05-01', 'warn', 'line 22 reached its end of life on 2027-04-30'],
    ['23.1.0', '2026-11-28', 'warn', 'tested on the lines 20, 22, 24, not 23'],
  ])('Node %s on %s → %s', (version, day, mark, text) => {
    const r = nodeLineResult(version, at(day));
    expect(r.ok).toBe(true);
    expect(r.warn ? 'warn' : 'ok').toBe(mark);
    expect(r.detail).toContain(text);
  });

  it('past its end: the date, and the lines to move to', () => {
    const r = nodeLineResult('20.20.2', at('2026-11-28'));
    expect(r.fix).toBe('move to Node 22 or 24; agentbox still runs on 20, and a later release may drop it');
    expect(r.detail).toContain('EBADENGINE at install for @anthropic-ai/sandbox-runtime and sanitize-html');
  });

  it.each([
    ['20.20.2', true],
    ['22.11.0', true],
    ['22.12.0', false],
    ['24.0.0', false],
  ])('engineNote(%s) names the EBADENGINE: %s', (version, said) => {
    expect(engineNote(version) !== '').toBe(said);
  });
});

describe('a setup the sandbox’s proxy refused says so, and names runs.setup_domains', () => {
  const NPM_OUTPUT = [
    'npm error code E403',
    'npm error 403 403 host is not on the allow list - GET https://registry.npmjs.org/dequal',
    'npm error 403 In most cases, you or one of your dependencies are requesting a package version that is forbidden by your security policy, or on a server you do not have access to.',
  ].join('\n');
  it.each([
    [NPM_OUTPUT, ['registry.npmjs.org']],
    [
      "ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 host is not on the allow list'))",
      [],
    ],
    ['curl: (56) CONNECT tunnel failed, response 403', []],
    ['npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nope', null],
  ])('refusedHosts(%#)', (output, hosts) => {
    expect(refusedHosts(output)?.hosts ?? null).toEqual(hosts);
  });

  const result = (excerpt: string) => ({
    ok: false,
    command: 'npm install',
    exitCode: 1,
    timedOut: false,
    stopped: false,
    durationMs: 2000,
    excerpt,
    logFile: '/x/raw/setup.log',
  });
  it('the failure and the next step', () => {
    const failure = setupFailure(result(NPM_OUTPUT), '.agents/runs/r/raw/setup.log', null, ['a.example']);
    expect(failure.message).toBe(
      `runs.setup "npm install" failed with exit code 1: the sandbox's network allowlist refused registry.npmjs.org; its output is in .agents/runs/r/raw/setup.log; claude was not started`,
    );
    expect(nextAction('FAILED', 'abc123', failure)).toBe(
      'let the setup reach registry.npmjs.org: in agentbox.yaml, under runs:, write  setup_domains: [a.example, registry.npmjs.org]  (runs.setup_domains: only the setup reaches them, not the agent), then agentbox trust and start the run again',
    );
    // Any other failure keeps its kind's next step.
    const plain = setupFailure(result('lockfile out of date'), 'log', null);
    expect(plain.next).toBeUndefined();
    expect(nextAction('FAILED', 'abc123', plain)).toContain('try the command in your own tree first');
  });
});
