import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { writeSettings } from '../../src/web/settings.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';

/**
 * The web UI's settings write never changes what runs a command or widens a run, in either file:
 * the keys written out here (not taken from src), each refused with 403, nothing written.
 */
const GUARDED: [string, string, unknown][] = [
  ['claude', 'bin', '/tmp/evil'],
  ['supervisor', 'bin', '/tmp/evil'],
  ['runs', 'setup', 'touch /tmp/x'],
  ['runs', 'verify', 'touch /tmp/x'],
  ['runs', 'notify', 'touch /tmp/x'],
  ['runs', 'env_pass', ['AWS_SECRET_ACCESS_KEY']],
  ['runs', 'fix_allowed_tools', ['WebFetch']],
  ['runs', 'worktree_dir', '/tmp/elsewhere'],
  ['runs', 'setup_domains', ['evil.example']],
  ['sandbox', 'allowed_domains', ['evil.example']],
  ['sandbox', 'mode', 'off'],
  ['sandbox', 'deny_read', []],
  // The person's own widening of what a run reads (rule 'yours'): a page must not open ~ to a run.
  ['sandbox', 'allow_read', ['~']],
];

describe('PUT /api/settings (writeSettings)', () => {
  let repo: TestRepo;
  let home: string;
  beforeEach(() => {
    repo = gitRepo();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-settings-home-'));
  });
  afterEach(() => {
    repo.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it.each(
    GUARDED.flatMap(([section, key, value]) =>
      ['project', 'global'].map((scope) => [scope, section, key, value]),
    ),
  )('refuses %s %s.%s with 403 and writes nothing', async (scope, section, key, value) => {
    const project = path.join(repo.dir, 'agentbox.yaml');
    fs.writeFileSync(project, 'supervisor:\n  mode: rules\n');
    await expect(
      writeSettings(repo.dir, { HOME: home }, { scope, [section as string]: { [key as string]: value } }),
    ).rejects.toMatchObject({ status: 403 });
    expect(fs.readFileSync(project, 'utf8')).toBe('supervisor:\n  mode: rules\n');
    expect(fs.existsSync(path.join(home, '.config'))).toBe(false);
  });

  it('a value with a line end in a key the file holds is written on one line; the file stays valid YAML, every command still reads it', async () => {
    // Found by a user's eye: `model: abc`, then `def` at column 0 — the file broken, every command refused.
    const project = path.join(repo.dir, 'agentbox.yaml');
    fs.writeFileSync(project, 'claude:\n  model: # opus\n');
    const env = { HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    await writeSettings(repo.dir, env, { scope: 'project', claude: { model: 'abc\ndef' } });
    const { config } = loadConfig({ repoRoot: repo.dir, env, projectTrusted: true });
    expect(config.claude.model).toBe('abc\ndef');
    expect(fs.readFileSync(project, 'utf8')).toBe('claude:\n  model: "abc\\ndef" # opus\n');
  });

  it('writes a setting that runs nothing; a project value looser than yours is said to wait for trust', async () => {
    const env = { HOME: home, XDG_STATE_HOME: path.join(home, 'state') };
    const looser = await writeSettings(repo.dir, env, { scope: 'project', supervisor: { mode: 'off' } });
    expect(looser).toMatchObject({ changed: ['supervisor.mode'], awaiting_trust: ['supervisor.mode'] });
    expect(fs.readFileSync(path.join(repo.dir, 'agentbox.yaml'), 'utf8')).toContain('mode: off');
    const stricter = await writeSettings(repo.dir, env, {
      scope: 'project',
      supervisor: { max_iterations: 10 },
    });
    expect(stricter).toMatchObject({ changed: ['supervisor.max_iterations'], awaiting_trust: [] });
    const own = await writeSettings(repo.dir, env, { scope: 'global', supervisor: { mode: 'off' } });
    expect(own).toMatchObject({ changed: ['supervisor.mode'], awaiting_trust: [] });
  });
});
