import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { checkTemplates, checkVerify } from '../../src/doctor/templates.js';
import { findRepo } from '../../src/git/repo.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

describe('doctor: templates and runs.verify', () => {
  let repo: TestRepo | undefined;

  it('passes when every type’s templates load, and names the file and the fix when one does not', async () => {
    repo = gitRepo();
    const found = await findRepo(repo.dir);
    const home = tempDir();
    expect(checkTemplates(found, { HOME: home }, DEFAULT_CONFIG)).toMatchObject({ ok: true });
    const dir = path.join(repo.dir, '.agentbox', 'templates');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'review.input.md'), 'look at {{branh}}\n');
    const bad = checkTemplates(found, { HOME: home }, DEFAULT_CONFIG);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toContain(path.join(dir, 'review.input.md'));
    expect(bad.fix).toContain('did you mean {{branch}}');
  });

  it("checks interactive's templates too (agentbox start's first task), and counts no output contract for it", async () => {
    repo = gitRepo();
    const found = await findRepo(repo.dir);
    const home = tempDir();
    const contract = {
      ...DEFAULT_CONFIG,
      supervisor: { ...DEFAULT_CONFIG.supervisor, allow_raw_output: false },
    };
    expect(checkTemplates(found, { HOME: home }, contract).detail).toContain('(4 with an output contract)');
    const dir = path.join(repo.dir, '.agentbox', 'templates');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'interactive.input.md'), 'start with {{tsak}}\n');
    const bad = checkTemplates(found, { HOME: home }, DEFAULT_CONFIG);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toContain(path.join(dir, 'interactive.input.md'));
  });

  it.each([
    ['no runs.verify', null, 'required', '/usr/bin:/bin', true],
    ['sandbox off: runs unsandboxed', 'npm test', 'off', '', true],
    ['no rg on PATH', 'npm test', 'required', '/nonexistent', false],
  ] as const)('%s', (_label, verify, mode, PATH, ok) => {
    const config = {
      ...DEFAULT_CONFIG,
      runs: { ...DEFAULT_CONFIG.runs, verify },
      sandbox: { ...DEFAULT_CONFIG.sandbox, mode },
    };
    const result = checkVerify({ PATH }, config, true);
    expect(result.ok).toBe(ok);
    if (!ok) expect(result.fix).toContain('ripgrep');
  });

  it('never says runs.verify can run in a sandbox that does not work (issue 38: every ✓ is true)', () => {
    const config = { ...DEFAULT_CONFIG, runs: { ...DEFAULT_CONFIG.runs, verify: 'npm test' } };
    const withRg = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    expect(checkVerify(withRg, config, false)).toMatchObject({ ok: false, skipped: true });
    expect(checkVerify(withRg, config, true)).toMatchObject({
      ok: true,
      detail: `"npm test" can run in each fix run's sandbox (not run)`,
    });
  });
});
