import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildClaudeArgs, buildInteractiveArgs } from '../../src/claude/args.js';
import { init } from '../../src/commands/init.js';
import { trust } from '../../src/commands/trust.js';
import { loadConfig, type PersonConfig } from '../../src/config/load.js';
import { applyProject } from '../../src/config/precedence.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { memoryIo } from '../../src/context.js';
import { inertSettings } from '../../src/doctor/probe-copy.js';
import { withRepoGuard } from '../../src/endpoint/settings.js';
import { DENY_RULES, GUARD_GROUP } from '../../src/settings/guard.js';
import { configEntries, mcpEntries, settingsEntries } from '../../src/trust/entries.js';
import { decideTrust, entryLine, hashEntries, launchTrusted, trustStatus } from '../../src/trust/index.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';
import { NOBODY, runWithOthersFileAt } from '../helpers/unprivileged.js';

const Y = 'agentbox.yaml';
const S = '.claude/settings.json';

/** A person who set nothing: the defaults are their settings. */
const DEFAULTS: PersonConfig = { config: DEFAULT_CONFIG, file: undefined, source: undefined };

describe('configEntries: the keys of agentbox.yaml that need trust', () => {
  it.each([
    [{}, []],
    [{ runs: { notify: 'curl x' } }, [{ file: Y, key: 'runs.notify', text: 'curl x' }]],
    [{ runs: { setup: 'npm ci', verify: 'npm test' } }, ['runs.verify', 'runs.setup']],
    [
      { sandbox: { mode: 'off' } },
      [{ file: Y, key: 'sandbox.mode', text: 'off', instead: 'default: required' }],
    ],
    [{ sandbox: { mode: 'required' } }, []],
    [
      { sandbox: { allowed_domains: ['evil.test'] } },
      [{ file: Y, key: 'sandbox.allowed_domains', text: '["evil.test"]', instead: 'default: []' }],
    ],
    [
      { runs: { setup_domains: ['a.test'], env_pass: ['AWS_SECRET'] } },
      ['runs.env_pass', 'runs.setup_domains'],
    ],
    [{ claude: { bin: './evil' }, supervisor: { bin: './evil2' } }, ['claude.bin', 'supervisor.bin']],
    [
      { runs: { fix_allowed_tools: ['WebFetch'], worktree_dir: '/tmp/x' } },
      ['runs.worktree_dir', 'runs.fix_allowed_tools'],
    ],
    // Narrowing or harmless: a cloned repository may set them.
    [{ sandbox: { deny_read: ['~/x'] }, runs: { timeout: '5m', notify: null }, claude: { model: 'x' } }, []],
    // Looser than the defaults the person kept: trust keys too (test/unit/config-rules.test.ts walks every key).
    [
      { supervisor: { max_iterations: 500 }, runs: { timeout: '2h' } },
      [
        { file: Y, key: 'supervisor.max_iterations', text: '500', instead: 'default: 50' },
        { file: Y, key: 'runs.timeout', text: '2h', instead: 'default: 30m' },
      ],
    ],
  ] as [Record<string, unknown>, unknown[]][])('%j → %j', (file, expected) => {
    const found = configEntries(Y, file as never, DEFAULTS);
    if (expected.every((e) => typeof e === 'string')) expect(found.map((e) => e.key)).toEqual(expected);
    else expect(found).toEqual(expected);
  });

  it('an untrusted file keeps everything else', () => {
    const config = applyProject(
      DEFAULT_CONFIG,
      { runs: { notify: 'x', timeout: '5m' }, sandbox: { mode: 'off', deny_read: ['~/a'] } },
      false,
    );
    expect(config.runs).toMatchObject({ notify: null, timeout: '5m' });
    expect(config.sandbox).toEqual({
      mode: 'required',
      allowed_domains: [],
      deny_read: ['~/a'],
      allow_read: [],
    });
  });
});

describe('settingsEntries: what a Claude Code settings file carries beyond agentbox guard', () => {
  const hook = (command: string, matcher?: string) => ({
    ...(matcher ? { matcher } : {}),
    hooks: [{ type: 'command', command }],
  });
  it.each([
    [
      'init only',
      {
        permissions: { deny: ['Read(./.agents/**)'] },
        hooks: { PreToolUse: [GUARD_GROUP] },
        agentbox: { version: 1 },
      },
      [],
    ],
    [
      'a SessionStart hook',
      { hooks: { SessionStart: [hook('touch /tmp/x')] } },
      [{ file: S, key: 'hooks.SessionStart', text: 'touch /tmp/x' }],
    ],
    [
      'beside the guard',
      { hooks: { PreToolUse: [GUARD_GROUP, hook('evil', 'Bash')] } },
      [{ file: S, key: 'hooks.PreToolUse', text: '[Bash] evil' }],
    ],
    [
      'an http hook',
      { hooks: { Stop: [{ hooks: [{ type: 'http', url: 'http://x' }] }] } },
      [{ file: S, key: 'hooks.Stop', text: 'http://x' }],
    ],
    [
      'allow rules',
      { permissions: { allow: ['Bash(curl:*)', 'Read'], ask: ['Bash'] } },
      [
        { file: S, key: 'permissions.allow', text: 'Bash(curl:*)' },
        { file: S, key: 'permissions.allow', text: 'Read' },
      ],
    ],
    [
      'defaultMode',
      { permissions: { defaultMode: 'bypassPermissions' } },
      [{ file: S, key: 'permissions.defaultMode', text: 'bypassPermissions' }],
    ],
    [
      'env',
      { env: { NODE_OPTIONS: '--require x' } },
      [{ file: S, key: 'env', text: '{"NODE_OPTIONS":"--require x"}' }],
    ],
    [
      'helpers',
      { apiKeyHelper: 'x', otelHeadersHelper: 'y', statusLine: { type: 'command', command: 'z' } },
      [
        { file: S, key: 'apiKeyHelper', text: 'x' },
        { file: S, key: 'otelHeadersHelper', text: 'y' },
        { file: S, key: 'statusLine', text: '{"type":"command","command":"z"}' },
      ],
    ],
    ['an unknown key', { somethingNew: true }, [{ file: S, key: 'somethingNew', text: 'true' }]],
    [
      'a hook group that is not a list',
      { hooks: { SessionStart: 'x' } },
      [{ file: S, key: 'hooks.SessionStart', text: 'x' }],
    ],
  ])('%s', (_name, value, expected) => {
    expect(settingsEntries(S, value as never)).toEqual(expected);
  });

  it('.mcp.json: each server', () => {
    expect(
      mcpEntries('.mcp.json', { mcpServers: { db: { command: 'sh' }, web: { url: 'http://x' } } }),
    ).toEqual([
      { file: '.mcp.json', key: 'mcpServers.db', text: '{"command":"sh"}' },
      { file: '.mcp.json', key: 'mcpServers.web', text: '{"url":"http://x"}' },
    ]);
  });
});

describe('entryLine: a repository text on the terminal', () => {
  it('escapes control characters in keys and texts, cuts long texts unless full', () => {
    const hostile = {
      file: S,
      key: 'hooks.\u001b]52;c;eA==\u0007',
      text: `echo \u001b[2J${' '.repeat(300)}; curl evil`,
    };
    const line = entryLine(hostile);
    expect(line).not.toMatch(/[\u0000-\u001f]/);
    expect(line).toContain('hooks.\\u001b]52;c;eA==\\u0007');
    expect(line).toContain('(agentbox trust shows it whole)');
    expect(line).not.toContain('curl evil');
    expect(entryLine(hostile, true)).toContain('; curl evil');
    const c1 = entryLine({ file: S, key: 'env', text: 'a\u009b2Jb\u202ec\u200bd' });
    expect(c1).toBe('  .claude/settings.json  env: a\\u009b2Jb\\u202ec\\u200bd');
    // Quotes hide nothing and are shown as they are; a backslash is doubled, so no escape shown is the repository's.
    expect(entryLine({ file: Y, key: 'runs.env_pass', text: '["A","B\\u001b"]\n' })).toBe(
      '  agentbox.yaml  runs.env_pass: ["A","B\\\\u001b"]\\n',
    );
  });
});

describe('hash and decision', () => {
  const a = [{ file: Y, key: 'runs.notify', text: 'echo a' }];
  const b = [{ file: Y, key: 'runs.notify', text: 'echo b' }];
  it.each([
    ['nothing to trust', [], undefined, 'nothing'],
    ['never trusted', a, undefined, 'untrusted'],
    ['trusted as is', a, { hash: hashEntries(a), trusted_at: 'x' }, 'trusted'],
    ['changed since', b, { hash: hashEntries(a), trusted_at: 'x' }, 'changed'],
  ] as const)('%s', (_name, entries, record, state) => {
    expect(decideTrust(entries, record)).toBe(state);
  });
  it('any change of file, key or text changes the hash', () => {
    const base = hashEntries(a);
    expect(hashEntries(b)).not.toBe(base);
    expect(hashEntries([{ ...a[0]!, file: S }])).not.toBe(base);
    expect(hashEntries([{ ...a[0]!, key: 'runs.setup' }])).not.toBe(base);
    expect(hashEntries([...a, ...a])).not.toBe(base);
    expect(hashEntries(a)).toBe(base);
  });
});

describe('launching claude for an untrusted repository', () => {
  const launch = {
    prompt: 'x',
    sessionId: '00000000-0000-4000-8000-000000000000',
    tools: [],
    allowedTools: [],
  };
  it.each([
    [undefined, false],
    [true, false],
    [false, true],
  ])('projectSettings %s → flags %s', (projectSettings, flags) => {
    const args = buildClaudeArgs({
      ...launch,
      ...(projectSettings === undefined ? {} : { projectSettings }),
    });
    expect(args.includes('--setting-sources=user') && args.includes('--strict-mcp-config')).toBe(flags);
    const interactive = buildInteractiveArgs({
      ...launch,
      ...(projectSettings === undefined ? {} : { projectSettings }),
    });
    expect(interactive.includes('--setting-sources=user')).toBe(flags);
  });
  it.each(['--setting-sources=user,project', '--strict-mcp-config', '--mcp-config=x.json'])(
    'the config may not pass %s itself',
    (arg) => {
      expect(() => buildClaudeArgs({ ...launch, extraArgs: [arg] })).toThrow(/set by agentbox itself/);
    },
  );
  it("init's guard comes with the run's own settings, beside them", () => {
    const own = {
      permissions: { deny: ['Bash(git push:*)'] },
      hooks: { PreToolUse: [{ matcher: 'Read', hooks: [] }] },
    };
    const guarded = withRepoGuard(own) as {
      permissions: { deny: string[] };
      hooks: { PreToolUse: unknown[] };
    };
    expect(guarded.permissions.deny).toEqual(['Bash(git push:*)', ...DENY_RULES]);
    expect(guarded.hooks.PreToolUse).toEqual([{ matcher: 'Read', hooks: [] }, GUARD_GROUP]);
    expect(own.permissions.deny).toEqual(['Bash(git push:*)']);
  });
});

describe('inertSettings: what doctor probe loads', () => {
  it('keeps the shape, runs nothing', () => {
    expect(
      inertSettings({
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'x' }] }] },
        apiKeyHelper: 'evil',
        statusLine: { type: 'command', command: 'evil' },
        env: { A: 'b' },
        enableAllProjectMcpServers: true,
        disableAllHooks: false,
      }),
    ).toEqual({
      hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'x' }] }] },
      apiKeyHelper: 'true',
      statusLine: { type: 'command', command: 'true' },
      env: { A: '' },
      disableAllHooks: true,
    });
  });
});

describe('agentbox trust, in-process on a real repository', () => {
  const setUp = () => {
    const repo = gitRepo({
      files: {
        [Y]: 'runs:\n  notify: echo hi\n',
        [S]: JSON.stringify({
          hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'touch x' }] }] },
        }),
      },
    });
    const state = tempDir('agentbox-state-');
    const env = { HOME: tempDir('agentbox-home-'), XDG_STATE_HOME: state };
    const run = async (options: Parameters<typeof trust>[1], answers?: string[]) => {
      const io = memoryIo(answers ? { answers } : {});
      const code = await trust({ cwd: repo.dir, env, io }, options);
      return { code, out: io.stdout, err: io.stderr };
    };
    return { repo, env, run, file: path.join(state, 'agentbox', 'trust.json') };
  };

  it('lists, asks, records outside the repository with mode 600, and asks again after a change', async () => {
    const { repo, env, run, file } = setUp();
    expect(loadConfig({ repoRoot: repo.dir, env }).config.runs.notify).toBeNull();
    const refused = await run({}, ['n']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('agentbox.yaml  runs.notify: echo hi');
    expect(refused.out).toContain('.claude/settings.json  hooks.SessionStart: touch x');
    expect(fs.existsSync(file)).toBe(false);
    await expect(run({})).rejects.toThrow(/nobody to ask/);

    expect((await run({}, ['y'])).code).toBe(0);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(trustStatus(repo.dir, env).state).toBe('trusted');
    expect(JSON.parse((await run({ json: true })).out)).toMatchObject({ state: 'trusted', trusted: true });

    repo.write(Y, 'runs:\n  notify: echo changed\n');
    expect(trustStatus(repo.dir, env).state).toBe('changed');
    expect((await run({ yes: true })).out).toContain('changed since you trusted it');
    expect(trustStatus(repo.dir, env).state).toBe('trusted');

    expect((await run({ revoke: true })).code).toBe(0);
    expect(trustStatus(repo.dir, env).state).toBe('untrusted');
  });

  it("a worktree's Claude Code files count only when they are what was trusted", async () => {
    const { repo, env, run } = setUp();
    await run({ yes: true });
    const status = trustStatus(repo.dir, env);
    const worktree = tempDir('agentbox-wt-');
    fs.mkdirSync(path.join(worktree, '.claude'));
    fs.copyFileSync(path.join(repo.dir, S), path.join(worktree, S));
    expect(launchTrusted(status, repo.dir)).toBe(true);
    expect(launchTrusted(status, worktree)).toBe(true);
    fs.writeFileSync(path.join(worktree, '.mcp.json'), '{"mcpServers":{"x":{"command":"sh"}}}');
    expect(launchTrusted(status, worktree)).toBe(false);
    expect(launchTrusted({ ...status, trusted: false }, repo.dir)).toBe(false);
  });

  it('init says what awaits trust, beside the guard it merges into that file', async () => {
    const { repo, env, run } = setUp();
    const io = memoryIo();
    expect(await init({ cwd: repo.dir, env, io })).toBe(0);
    expect(io.stdout).toContain('.claude/settings.json (beside 1 entries of that file that await your trust');
    expect(io.stdout).toContain('  .claude/settings.json  hooks.SessionStart: touch x');
    expect(io.stdout).toContain('  agentbox.yaml  runs.notify: echo hi');
    expect(io.stdout).toContain('run "agentbox trust"');
    await run({ yes: true });
    const again = memoryIo();
    await init({ cwd: repo.dir, env, io: again });
    expect(again.stdout).not.toContain('trust');
  });

  it('a trust file with a wider mode is not used, said, and replaced', async () => {
    const { repo, env, run, file } = setUp();
    await run({ yes: true });
    fs.chmodSync(file, 0o644);
    const status = trustStatus(repo.dir, env);
    expect(status.state).toBe('untrusted');
    expect(status.storeProblem).toMatch(/mode 644, wider than 600: it is not used/);
    const again = await run({ yes: true });
    expect(again.err).toMatch(/wider than 600: it is not used; it will be replaced/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(trustStatus(repo.dir, env).state).toBe('trusted');
  });

  it('a trust file of another owner is not used', async () => {
    const { repo, env, run, file } = setUp();
    await run({ yes: true });
    expect(trustStatus(repo.dir, env).trusted).toBe(true);
    if (process.getuid?.() === 0) {
      fs.chownSync(file, NOBODY, NOBODY);
      const status = trustStatus(repo.dir, env);
      expect(status.storeProblem).toMatch(/belongs to user 65534, not to you \(0\): it is not used/);
      expect(status.trusted).toBe(false);
      return;
    }
    // NOTE: a user cannot give a file away: the trust file is replaced by one of root's in a user
    // and mount namespace of the test's own (test/helpers/unprivileged.ts), where the check runs.
    const said = runWithOthersFileAt(
      file,
      `import { trustStatus } from '@src/trust/index.ts';
      const s = trustStatus(${JSON.stringify(repo.dir)}, ${JSON.stringify(env)});
      console.log(JSON.stringify({ problem: s.storeProblem, trusted: s.trusted }));`,
    );
    expect(JSON.parse(said)).toEqual({
      problem: expect.stringMatching(/belongs to user \d+, not to you \(0\): it is not used/),
      trusted: false,
    });
  });

  it('a trust file that is a symlink is not used', async () => {
    const { repo, env, run, file } = setUp();
    await run({ yes: true });
    const real = `${file}.real`;
    fs.renameSync(file, real);
    fs.symlinkSync(real, file);
    expect(trustStatus(repo.dir, env).storeProblem).toMatch(/not a plain file/);
    expect(trustStatus(repo.dir, env).trusted).toBe(false);
  });
});
