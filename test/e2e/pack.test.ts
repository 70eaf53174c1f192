import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/bin.js';
import { GIT_ENV, gitRepo, tempDir } from '../helpers/git-repo.js';
import { request, startUi } from '../helpers/ui.js';

/**
 * The published shape: `npm pack` → install the tarball into a fresh project → `npx agentbox`.
 * Catches a missing `files` entry, a dependency left in devDependencies, a broken bin.
 */
describe('npm pack', () => {
  const dir = tempDir('agentbox-pack-');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const npm = (args: string[], cwd: string) =>
    execFileSync('npm', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env },
    });

  it('produces a package that installs, runs with npx and serves the whole page', async () => {
    // NOTE: --ignore-scripts: `prepare` would rebuild dist/ (deleting it first) under the e2e
    // files running beside this one; `npm test` has just built it.
    const packed = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], REPO_ROOT);
    const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('['))) as [
      { filename: string; files: { path: string }[] },
    ];
    const paths = files.map((f) => f.path);
    expect(paths).toContain('bin/agentbox.cjs');
    expect(paths).toContain('bin/code-cache.cjs');
    expect(paths.filter((p) => p.startsWith('.v8-cache'))).toEqual([]);
    expect(paths).toContain('dist/cli/main.cjs');
    expect(paths).toContain('README.md');
    expect(paths.filter((p) => p.startsWith('test/') || p.startsWith('src/'))).toEqual([]);
    const web = fs.readdirSync(path.join(REPO_ROOT, 'web')).map((name) => `web/${name}`);
    expect(paths.filter((p) => p.startsWith('web/')).sort()).toEqual(web.sort());

    const project = path.join(dir, 'consumer');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "consumer", "private": true }\n');
    npm(['install', path.join(dir, filename), '--prefer-offline', '--no-audit', '--no-fund'], project);

    const help = npm(['exec', '--', 'agentbox', '--help'], project);
    expect(help).toContain('Usage: agentbox');
    expect(help).toContain('init');

    const repo = gitRepo();
    const bin = path.join(project, 'node_modules/.bin/agentbox');
    const out = execFileSync(bin, ['init'], {
      cwd: repo.dir,
      encoding: 'utf8',
      env: { ...process.env, ...GIT_ENV },
    });
    expect(out).toContain('agentbox is set up');
    expect(fs.existsSync(path.join(repo.dir, '.agents/runs'))).toBe(true);
    // The chunks init loaded are in V8's code cache, inside the installed package (bin/code-cache.cjs).
    const cached = fs.readdirSync(path.join(project, 'node_modules/agentbox/.v8-cache'));
    expect(cached.some((name) => name.startsWith('main.cjs.'))).toBe(true);
    // The installed UI serves every module of the page, and diff2html from its own dependency.
    const home = tempDir('agentbox-pack-home-');
    const installedBin = path.join(project, 'node_modules/agentbox/bin/agentbox.cjs');
    const env = { ...(process.env as Record<string, string>), ...GIT_ENV, HOME: home, XDG_STATE_HOME: home };
    const ui = await startUi(repo.dir, env, [], installedBin);
    try {
      const assets = [...web.filter((p) => /\.(js|css)$/.test(p)), 'diff2html.js', 'diff2html.css'];
      for (const asset of assets.map((p) => p.replace(/^web\//, ''))) {
        const answer = await request(ui.port, `/assets/${asset}`);
        expect(answer.status, asset).toBe(200);
        if (!asset.startsWith('diff2html'))
          expect(answer.text, asset).toBe(fs.readFileSync(path.join(REPO_ROOT, 'web', asset), 'utf8'));
      }
    } finally {
      await ui.stop();
    }

    // Off, nothing more is written.
    fs.rmSync(path.join(project, 'node_modules/agentbox/.v8-cache'), { recursive: true });
    execFileSync(bin, ['--help'], { env: { ...process.env, AGENTBOX_CODE_CACHE: '0' } });
    expect(fs.existsSync(path.join(project, 'node_modules/agentbox/.v8-cache'))).toBe(false);
  }, 240_000);
});
