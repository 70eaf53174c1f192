import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runAgentbox } from '../helpers/bin.js';
import { tempDir } from '../helpers/git-repo.js';
import { type Project, project } from '../helpers/project.js';
import { startPty } from '../helpers/pty.js';

/**
 * An install whose node-pty native module did not build (npm 12 blocks install scripts unless
 * allowed; a machine without a compiler): a copy of the built agentbox whose node-pty cannot load.
 * The stand-in node-pty is the one fake here: a broken native build cannot be had on cue.
 */
describe('without a working node-pty', () => {
  let p: Project;
  let install: string;
  beforeAll(async () => {
    p = await project();
    install = tempDir('agentbox-install-');
    for (const entry of ['bin', 'dist', 'templates', 'hooks', 'package.json'])
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(install, entry), { recursive: true });
    const modules = path.join(install, 'node_modules');
    fs.mkdirSync(modules);
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'node_modules'))) {
      if (entry === 'node-pty' || entry.startsWith('.')) continue;
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', entry), path.join(modules, entry));
    }
    const pty = path.join(modules, 'node-pty');
    fs.mkdirSync(pty);
    fs.writeFileSync(path.join(pty, 'package.json'), JSON.stringify({ name: 'node-pty', main: 'index.js' }));
    fs.writeFileSync(
      path.join(pty, 'index.js'),
      'throw new Error("Cannot find module \'../build/Release/pty.node\'");\n',
    );
  });
  const bin = () => path.join(install, 'bin/agentbox.cjs');

  it('doctor names the broken check and how to fix it', async () => {
    const result = await runAgentbox(['doctor'], { cwd: p.repo.dir, env: p.env, bin: bin() });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      "✗ pty              interactive sessions need node-pty, whose native module did not load: Cannot find module '../build/Release/pty.node'",
    );
    expect(result.stdout).toContain('fix: rebuild it with install scripts allowed: npm rebuild node-pty');
    expect(result.stdout).toMatch(/✓ claude /);
  });

  it('start says so before it creates anything', async () => {
    const before = p.runs().length;
    const s = startPty(['start'], { cwd: p.repo.dir, env: p.env, bin: bin() });
    expect(await s.exited).toBe(1);
    expect(s.output()).toContain('interactive sessions need node-pty, whose native module did not load');
    expect(s.output()).toContain('npm rebuild node-pty');
    expect(p.runs()).toHaveLength(before);
  });
});
