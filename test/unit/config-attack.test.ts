import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/commands/init.js';
import { trust } from '../../src/commands/trust.js';
import { runTimeout } from '../../src/config/schema.js';
import { memoryIo } from '../../src/context.js';
import { prepareRunPrivacy } from '../../src/sandbox/prepare.js';
import { loadTrustedConfig, trustStatus, untrustedNotice } from '../../src/trust/index.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

/**
 * A cloned repository's agentbox.yaml against the person's own config (issue 37, item 2): it can
 * tighten what the person set, never loosen it unasked. In-process, on real repositories, with
 * HOME, XDG_CONFIG_HOME and XDG_STATE_HOME of the test's own.
 */
function person(userConfig: string) {
  const home = tempDir('agentbox-home-');
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    TMPDIR: tempDir('agentbox-tmp-'),
  };
  fs.mkdirSync(path.join(home, '.config', 'agentbox'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'agentbox', 'config.yaml'), userConfig);
  return { home, env };
}

async function trustCommand(cwd: string, env: Record<string, string>, options = {}) {
  const io = memoryIo();
  const code = await trust({ cwd, env, io }, options);
  return { code, out: io.stdout, err: io.stderr };
}

describe('a repository that empties the person’s sandbox.deny_read', () => {
  it('still denies ~/private, to the run’s sandbox, and `agentbox trust` claims nothing it does not do', async () => {
    const { home, env } = person('sandbox:\n  deny_read: ["~/private"]\n');
    fs.mkdirSync(path.join(home, 'private'));
    fs.writeFileSync(path.join(home, 'private', 'secret.txt'), 'PRIVATE-SECRET\n');
    const repo = gitRepo({ files: { 'agentbox.yaml': 'sandbox: {deny_read: []}\n' } });

    const { config, trust: status } = loadTrustedConfig({ repoRoot: repo.dir, env });
    expect(config.sandbox.deny_read).toEqual(['~/private']);
    // Nothing to trust is the truth now: an empty list takes no denial away.
    expect(status?.state).toBe('nothing');
    const shown = await trustCommand(repo.dir, env);
    expect(shown).toEqual({ code: 0, out: `${status!.root} carries nothing that needs trust\n`, err: '' });
    // Trusted or not, a denial of the person's stays: trust changes nothing here.
    expect(loadTrustedConfig({ repoRoot: repo.dir, env }).config.sandbox.deny_read).toEqual(['~/private']);

    // The run's sandbox is built from that config: the folder is on its deny list.
    const privacy = await prepareRunPrivacy({
      env,
      runName: 'run_attack',
      repoRoot: repo.dir,
      worktree: null,
      fenced: true,
      config: config.sandbox,
    });
    try {
      expect(privacy.sandbox?.denyRead).toContain(path.join(home, 'private'));
    } finally {
      privacy.area.dispose();
    }
  });

  it('adds its own denials to the person’s', () => {
    const { env } = person('sandbox:\n  deny_read: ["~/private"]\n');
    const repo = gitRepo({
      files: { 'agentbox.yaml': 'sandbox:\n  deny_read: ["~/private", "secrets/"]\n' },
    });
    expect(loadTrustedConfig({ repoRoot: repo.dir, env }).config.sandbox.deny_read).toEqual([
      '~/private',
      'secrets/',
    ]);
    expect(trustStatus(repo.dir, env).state).toBe('nothing');
  });
});

describe('a repository that raises the person’s limits', () => {
  const raising = 'supervisor:\n  max_cost: 50\n  max_iterations: 500\nruns:\n  timeout: 6h\n';

  it('is not applied untrusted, is listed by `agentbox trust` with both values, and applies once trusted', async () => {
    const { env } = person('supervisor:\n  max_cost: 2\nruns:\n  timeout: 30m\n');
    const repo = gitRepo({ files: { 'agentbox.yaml': raising } });

    const untrusted = loadTrustedConfig({ repoRoot: repo.dir, env });
    expect(untrusted.config.supervisor.max_cost).toBe(2);
    expect(untrusted.config.supervisor.max_iterations).toBe(50);
    expect(runTimeout(untrusted.config)).toBe('30m');
    expect(untrusted.trust?.state).toBe('untrusted');
    const notice = untrustedNotice(untrusted.trust!);
    expect(notice).toContain('loosen your limits');
    expect(notice).toContain('  agentbox.yaml  supervisor.max_cost: 50  (yours: 2)');

    const listed = await trustCommand(repo.dir, env, { yes: true });
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(
      [
        '  agentbox.yaml  supervisor.max_iterations: 500  (default: 50)',
        '  agentbox.yaml  supervisor.max_cost: 50  (yours: 2)',
        '  agentbox.yaml  runs.timeout: 6h  (yours: 30m)',
      ].join('\n'),
    );

    const trusted = loadTrustedConfig({ repoRoot: repo.dir, env });
    expect(trusted.config.supervisor.max_cost).toBe(50);
    expect(trusted.config.supervisor.max_iterations).toBe(500);
    expect(runTimeout(trusted.config)).toBe('6h');
  });

  it('a lower limit applies unasked, and nothing is listed', async () => {
    const { env } = person('supervisor:\n  max_cost: 2\nruns:\n  timeout: 30m\n');
    const repo = gitRepo({
      files: { 'agentbox.yaml': 'supervisor:\n  max_cost: 0.5\nruns:\n  timeout: 5m\n' },
    });
    const { config, trust: status } = loadTrustedConfig({ repoRoot: repo.dir, env });
    expect(config.supervisor.max_cost).toBe(0.5);
    expect(runTimeout(config)).toBe('5m');
    expect(status?.state).toBe('nothing');
  });

  it('stays trusted when the person raises their own limit past it, asks again when a lower one of theirs makes it loosen', async () => {
    const { home, env } = person('supervisor:\n  max_cost: 2\n');
    const file = path.join(home, '.config', 'agentbox', 'config.yaml');
    const repo = gitRepo({
      files: { 'agentbox.yaml': 'supervisor:\n  max_cost: 50\nruns:\n  verify: npm test\n  timeout: 20m\n' },
    });
    await trustCommand(repo.dir, env, { yes: true });
    expect(trustStatus(repo.dir, env).entries.map((e) => e.key)).toEqual([
      'supervisor.max_cost',
      'runs.verify',
    ]);

    // The cost entry is gone (50 no longer loosens 100); the verify command is as trusted.
    fs.writeFileSync(file, 'supervisor:\n  max_cost: 100\n');
    expect(trustStatus(repo.dir, env).entries.map((e) => e.key)).toEqual(['runs.verify']);
    expect(trustStatus(repo.dir, env).state).toBe('trusted');
    expect(loadTrustedConfig({ repoRoot: repo.dir, env }).config.runs.verify).toBe('npm test');

    // The person's run timeout goes below the repository's 20m: that value now loosens theirs, and
    // they never saw it as such: the repository asks again, and nothing of it is used meanwhile.
    fs.writeFileSync(file, 'supervisor:\n  max_cost: 100\nruns:\n  timeout: 10m\n');
    const status = trustStatus(repo.dir, env);
    expect(status.state).toBe('changed');
    expect(status.entries.map((e) => e.key)).toEqual(['runs.timeout', 'runs.verify']);
    const { config } = loadTrustedConfig({ repoRoot: repo.dir, env });
    expect(config.runs.verify).toBeNull();
    expect(config.runs.timeout).toBe('10m');
  });
});

describe('re-trust (issue 38, item 7)', () => {
  it('lists what is new or changed apart from what is as trusted, and list values without escaped quotes', async () => {
    const { env } = person('');
    const repo = gitRepo({
      files: {
        'agentbox.yaml': 'runs:\n  notify: echo one\nsandbox:\n  allowed_domains: ["a.test", "b.test"]\n',
      },
    });
    const first = await trustCommand(repo.dir, env, { yes: true });
    expect(first.out).toContain(
      '  agentbox.yaml  sandbox.allowed_domains: ["a.test","b.test"]  (default: [])\n',
    );
    expect(first.out).not.toContain('\\"');

    repo.write(
      'agentbox.yaml',
      'runs:\n  notify: echo two\nsandbox:\n  allowed_domains: ["a.test", "b.test"]\n',
    );
    const again = await trustCommand(repo.dir, env, { yes: true });
    expect(again.out).toContain(
      [
        'loosen your limits (changed since you trusted it):',
        'new or changed since you trusted it:',
        '  agentbox.yaml  runs.notify: echo two',
        'as you trusted it:',
        '  agentbox.yaml  sandbox.allowed_domains: ["a.test","b.test"]  (default: [])',
      ].join('\n'),
    );
  });
});

describe('a broken user config', () => {
  it('stops init before it writes anything, naming the file', async () => {
    const { home, env } = person('supervisor:\n  max_cost: lots\n');
    const repo = gitRepo();
    await expect(init({ cwd: repo.dir, env, io: memoryIo() }, {})).rejects.toThrow(
      path.join(home, '.config', 'agentbox', 'config.yaml'),
    );
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
  });
});
