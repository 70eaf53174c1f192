import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runAgentbox } from '../helpers/bin.js';
import { tempDir } from '../helpers/git-repo.js';
import { type Project, project } from '../helpers/project.js';
import { startPty } from '../helpers/pty.js';

const PLATFORM = `${process.platform}-${process.arch}`;

/**
 * An install without node-pty's prebuilt native module, as `npm install --omit=optional` (or a
 * node_modules copied from another OS) leaves it: a copy of the built agentbox whose
 * node_modules holds @lydell/node-pty itself (a real copy, so its lookups start here) and not the
 * platform package with the binary. Nothing in it is a stand-in.
 */
describe("without node-pty's native module", () => {
  let p: Project;
  let install: string;
  beforeAll(async () => {
    p = await project();
    install = tempDir('agentbox-install-');
    for (const entry of ['bin', 'dist', 'templates', 'hooks', 'package.json'])
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(install, entry), { recursive: true });
    const modules = path.join(install, 'node_modules');
    fs.mkdirSync(path.join(modules, '@lydell'), { recursive: true });
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'node_modules'))) {
      if (entry === '@lydell' || entry.startsWith('.')) continue;
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', entry), path.join(modules, entry));
    }
    fs.cpSync(path.join(REPO_ROOT, 'node_modules/@lydell/node-pty'), path.join(modules, '@lydell/node-pty'), {
      recursive: true,
    });
  });
  const bin = () => path.join(install, 'bin/agentbox.cjs');

  it('doctor names the broken check and how to fix it', async () => {
    const result = await runAgentbox(['doctor'], { cwd: p.repo.dir, env: p.env, bin: bin() });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `✗ pty              interactive sessions need node-pty, whose native module did not load: The @lydell/node-pty package supports your platform (${PLATFORM}), but it could not find the binary package for it`,
    );
    expect(result.stdout).toContain(
      `fix: install agentbox again without --omit=optional, on this machine (node-pty's prebuilt module for ${PLATFORM} is the optional dependency @lydell/node-pty-${PLATFORM})`,
    );
    expect(result.stdout).toMatch(/✓ claude /);
  });

  it('start says so before it creates anything', async () => {
    const before = p.runs().length;
    const s = startPty(['start'], { cwd: p.repo.dir, env: p.env, bin: bin() });
    expect(await s.exited).toBe(1);
    expect(s.output()).toContain('interactive sessions need node-pty, whose native module did not load');
    expect(s.output()).toContain('without --omit=optional');
    expect(p.runs()).toHaveLength(before);
  });
});
