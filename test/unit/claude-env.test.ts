import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildAgentEnv,
  ENV_PREFIXES,
  ENV_WHITELIST,
  isSecretName,
  proxyHasCredentials,
} from '../../src/claude/env.js';
import {
  keyHelperCommand,
  movableModelKey,
  unusedCredentials,
  withoutModelCredentials,
} from '../../src/claude/model-key.js';

const CWD = '/work/repo';

/** A developer's shell: what a run needs next to what it must never see. */
const PARENT: Record<string, string | undefined> = {
  HOME: '/home/dev',
  PATH: '/usr/local/bin:/usr/bin:/bin',
  TERM: 'xterm-256color',
  LANG: 'en_US.UTF-8',
  LC_ALL: 'en_US.UTF-8',
  USER: 'dev',
  LOGNAME: 'dev',
  SHELL: '/bin/zsh',
  TMPDIR: '/tmp',
  TZ: 'Europe/Paris',
  TMUX: '/tmp/tmux-1000/default,123,0',
  COLORTERM: 'truecolor',
  NO_COLOR: '',
  EDITOR: 'vim',
  PWD: '/somewhere/else',
  OLDPWD: '/before',
  SHLVL: '2',
  ANTHROPIC_API_KEY: 'sk-ant-xyz',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999',
  CLAUDE_CONFIG_DIR: '/home/dev/.claude',
  CLAUDE_CODE_OAUTH_TOKEN: 'oauth-token',
  AGENTBOX_TOKEN: 'hook-token',
  MAX_MCP_OUTPUT_TOKENS: '25000',
  AWS_ACCESS_KEY_ID: 'AKIA…',
  AWS_SECRET_ACCESS_KEY: 'secret',
  AWS_PROFILE: 'prod',
  AWS_REGION: 'eu-west-1',
  GOOGLE_APPLICATION_CREDENTIALS: '/home/dev/gcp.json',
  AZURE_CLIENT_SECRET: 'secret',
  GITHUB_TOKEN: 'ghp_x',
  GH_TOKEN: 'ghp_y',
  NPM_TOKEN: 'npm_x',
  SSH_AUTH_SOCK: '/run/user/1000/ssh-agent.sock',
  DATABASE_URL: 'postgres://u:p@db/prod',
  STRIPE_SECRET_KEY: 'sk_live',
  OPENAI_API_KEY: 'sk-openai',
  DB_PASSWORD: 'hunter2',
  XDG_RUNTIME_DIR: '/run/user/1000',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
  NODE_OPTIONS: '--require /tmp/evil.js',
  GIT_DIR: '/elsewhere/.git',
  GIT_AUTHOR_NAME: 'Dev',
  MY_APP_MODE: 'test',
  MY_APP_TOKEN: 'app-token',
  UNSET_ONE: undefined,
};

describe('buildAgentEnv', () => {
  const env = buildAgentEnv(PARENT, { cwd: CWD });

  it.each([
    'HOME',
    'PATH',
    'TERM',
    'LANG',
    'LC_ALL',
    'USER',
    'LOGNAME',
    'SHELL',
    'TMPDIR',
    'TZ',
    'TMUX',
    'COLORTERM',
    'EDITOR',
    // claude's own and ours, even when the name looks like a secret: claude needs them
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_BASE_URL',
    'CLAUDE_CONFIG_DIR',
    'CLAUDE_CODE_OAUTH_TOKEN',
    // whitelisted by exact name though it contains TOKEN
    'MAX_MCP_OUTPUT_TOKENS',
  ])('passes %s', (name) => {
    expect(env[name]).toBe(PARENT[name]);
  });

  it.each([
    // the hook endpoint's secret never reaches an agent, though AGENTBOX_ passes as a family
    'AGENTBOX_TOKEN',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_PROFILE',
    'AWS_REGION',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'AZURE_CLIENT_SECRET',
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'NPM_TOKEN',
    'SSH_AUTH_SOCK',
    'DATABASE_URL',
    'STRIPE_SECRET_KEY',
    'OPENAI_API_KEY',
    'DB_PASSWORD',
    'XDG_RUNTIME_DIR',
    'DBUS_SESSION_BUS_ADDRESS',
    'NODE_OPTIONS',
    'GIT_DIR',
    'GIT_AUTHOR_NAME',
    'MY_APP_MODE',
    'MY_APP_TOKEN',
    'OLDPWD',
    'SHLVL',
    'UNSET_ONE',
  ])('drops %s', (name) => {
    expect(name in env).toBe(false);
  });

  it('keeps an empty value (NO_COLOR= means something) and sets PWD to the launch directory', () => {
    expect(env.NO_COLOR).toBe('');
    expect(env.PWD).toBe(CWD);
  });

  it('holds nothing but whitelisted and prefixed names, and PWD', () => {
    for (const name of Object.keys(env)) {
      const allowed =
        name === 'PWD' || ENV_WHITELIST.includes(name) || ENV_PREFIXES.some((p) => name.startsWith(p));
      expect(allowed, name).toBe(true);
    }
  });

  it.each<[string, string[], Record<string, string | undefined>]>([
    [
      'an exact name passes, secret-looking or not',
      ['MY_APP_MODE', 'DB_PASSWORD'],
      {
        MY_APP_MODE: 'test',
        DB_PASSWORD: 'hunter2',
        AWS_REGION: undefined,
      },
    ],
    [
      'an exact AWS name for Bedrock',
      ['AWS_REGION', 'AWS_SECRET_ACCESS_KEY'],
      {
        AWS_REGION: 'eu-west-1',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_ACCESS_KEY_ID: undefined,
      },
    ],
    [
      'a wildcard passes its family but never a secret-looking member',
      ['MY_APP_*'],
      { MY_APP_MODE: 'test', MY_APP_TOKEN: undefined },
    ],
    [
      'a cloud family never passes by wildcard: name each variable',
      ['AWS_*'],
      { AWS_REGION: undefined, AWS_PROFILE: undefined, AWS_SECRET_ACCESS_KEY: undefined },
    ],
    [
      'GIT_* passes identity, AUTHOR is not AUTH',
      ['GIT_*'],
      {
        GIT_AUTHOR_NAME: 'Dev',
        GIT_DIR: '/elsewhere/.git',
      },
    ],
    ['a lone * passes nothing extra', ['*'], { MY_APP_MODE: undefined, GIT_DIR: undefined }],
    ['a name that is not set adds nothing', ['NOT_SET_ANYWHERE'], { NOT_SET_ANYWHERE: undefined }],
  ])('pass: %s', (_label, pass, expected) => {
    const out = buildAgentEnv(PARENT, { cwd: CWD, pass });
    for (const [name, value] of Object.entries(expected)) {
      if (value === undefined) expect(name in out, name).toBe(false);
      else expect(out[name], name).toBe(value);
    }
  });

  it('lets extra win over everything, PWD included', () => {
    const out = buildAgentEnv(PARENT, {
      cwd: CWD,
      extra: {
        HOME: '/isolated',
        PWD: '/forced',
        AGENTBOX_RUN: '25-11-22_1430__x__a1b2c3',
        GITHUB_TOKEN: 'given',
      },
    });
    expect(out.HOME).toBe('/isolated');
    expect(out.PWD).toBe('/forced');
    expect(out.AGENTBOX_RUN).toBe('25-11-22_1430__x__a1b2c3');
    expect(out.GITHUB_TOKEN).toBe('given');
  });

  it.each<[string, Record<string, string>, string[], Record<string, string | undefined>]>([
    [
      'proxies without credentials pass, any case',
      {
        HTTPS_PROXY: 'http://proxy.corp:3128',
        http_proxy: 'http://proxy.corp:3128',
        NO_PROXY: 'localhost,127.0.0.1,.corp',
        no_proxy: 'localhost',
        ALL_PROXY: 'socks5://proxy.corp:1080',
      },
      [],
      {
        HTTPS_PROXY: 'http://proxy.corp:3128',
        http_proxy: 'http://proxy.corp:3128',
        NO_PROXY: 'localhost,127.0.0.1,.corp',
        no_proxy: 'localhost',
        ALL_PROXY: 'socks5://proxy.corp:1080',
      },
    ],
    [
      'a proxy URL with a password is a secret',
      {
        HTTPS_PROXY: 'http://me:s3cret@proxy.corp:3128',
        https_proxy: 'http://me@proxy.corp:3128',
        HTTP_PROXY: 'http://proxy.corp:3128/path@x',
      },
      [],
      {
        HTTPS_PROXY: undefined,
        https_proxy: undefined,
        HTTP_PROXY: 'http://proxy.corp:3128/path@x',
      },
    ],
    [
      '…which passes when named exactly',
      { HTTPS_PROXY: 'http://me:s3cret@proxy.corp:3128' },
      ['HTTPS_PROXY'],
      {
        HTTPS_PROXY: 'http://me:s3cret@proxy.corp:3128',
      },
    ],
    [
      '…but not through a wildcard',
      { HTTPS_PROXY: 'http://me:s3cret@proxy.corp:3128' },
      ['HTTP*'],
      {
        HTTPS_PROXY: undefined,
      },
    ],
  ])('%s', (_label, parent, pass, expected) => {
    const out = buildAgentEnv(parent, { cwd: CWD, pass });
    for (const [name, value] of Object.entries(expected)) {
      if (value === undefined) expect(name in out, name).toBe(false);
      else expect(out[name], name).toBe(value);
    }
  });

  it('does not change its input', () => {
    const parent = { HOME: '/h', AWS_REGION: 'x' };
    buildAgentEnv(parent, { cwd: CWD, extra: { HOME: '/other' } });
    expect(parent).toEqual({ HOME: '/h', AWS_REGION: 'x' });
  });
});

describe('isSecretName', () => {
  it.each([
    ['GITHUB_TOKEN', true],
    ['SLACK_BOT_TOKEN', true],
    ['AWS_REGION', true],
    ['GOOGLE_CLOUD_PROJECT', true],
    ['AZURE_TENANT_ID', true],
    ['STRIPE_SECRET_KEY', true],
    ['OPENAI_API_KEY', true],
    ['APIKEY', true],
    ['DB_PASSWORD', true],
    ['MYSQL_PWD', true],
    ['PWD', false],
    ['PGPASSWORD', true],
    ['SENTRY_DSN', true],
    ['GITLAB_PAT', true],
    ['SSH_AUTH_SOCK', true],
    ['DATABASE_URL', true],
    ['NPM_CONFIG_AUTH', true],
    ['DBUS_SESSION_BUS_ADDRESS', true],
    ['KUBECONFIG', true],
    ['GIT_AUTHOR_NAME', false],
    ['GIT_COMMITTER_EMAIL', false],
    ['MY_APP_MODE', false],
    ['KEYBOARD_LAYOUT', false],
    ['JAVA_HOME', false],
  ])('%s → %s', (name, secret) => {
    expect(isSecretName(name)).toBe(secret);
  });
});

describe('proxyHasCredentials', () => {
  it.each([
    ['http://proxy:3128', false],
    ['proxy:3128', false],
    ['http://user:pass@proxy:3128', true],
    ['http://user@proxy:3128', true],
    ['user:pass@proxy:3128', true],
    ['socks5h://u:p@proxy', true],
    ['http://proxy:3128/a@b', false],
    ['http://proxy:3128?x=a@b', false],
    ['', false],
  ])('%j → %s', (value, expected) => {
    expect(proxyHasCredentials(value)).toBe(expected);
  });
});

describe('the model key kept out of a fenced run (src/claude/model-key.ts)', () => {
  it("moves ANTHROPIC_API_KEY when it is claude's credential, and nothing else", () => {
    expect(movableModelKey({ ANTHROPIC_API_KEY: 'sk-1' })).toBe('sk-1');
    expect(movableModelKey({})).toBeNull();
    expect(movableModelKey({ ANTHROPIC_API_KEY: '' })).toBeNull();
    // A gateway's bearer token wins over the key in claude: neither moves.
    expect(movableModelKey({ ANTHROPIC_API_KEY: 'sk-1', ANTHROPIC_AUTH_TOKEN: 't' })).toBeNull();
    expect(movableModelKey({ CLAUDE_CODE_OAUTH_TOKEN: 'o' })).toBeNull();
  });

  it('the helper command prints the kept key through /bin/sh, whatever the path holds', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox key 'quoted' $HOME-"));
    try {
      const file = path.join(dir, 'model-key');
      fs.writeFileSync(file, 'sk-ant-kept');
      const out = execFileSync('/bin/sh', ['-c', keyHelperCommand(file)], { encoding: 'utf8' });
      expect(out).toBe('sk-ant-kept');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("runs.setup and runs.verify run without the model's credentials (withoutModelCredentials)", () => {
  it('drops every credential Claude Code takes, by name or by what it carries, and keeps the rest', () => {
    const credentials = {
      ANTHROPIC_API_KEY: 'a',
      ANTHROPIC_AUTH_TOKEN: 'b',
      ANTHROPIC_FOUNDRY_API_KEY: 'c',
      ANTHROPIC_CUSTOM_HEADERS: 'Authorization: Bearer d',
      CLAUDE_CODE_OAUTH_TOKEN: 'e',
      CLAUDE_CODE_OAUTH_REFRESH_TOKEN: 'f',
      CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'g',
      CLAUDE_CODE_SESSION_ACCESS_TOKEN: 'h',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer i',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Bearer j',
    };
    const kept = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      ANTHROPIC_BASE_URL: 'https://gateway.example',
      CLAUDE_CODE_USE_BEDROCK: '1',
      AGENTBOX_RUN: 'r',
      // A name the person passed on purpose (runs.env_pass): not Claude Code's.
      NPM_TOKEN: 'n',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector',
    };
    expect(withoutModelCredentials({ ...credentials, ...kept })).toEqual(kept);
  });
});

describe('the credentials claude would not use never reach it (unusedCredentials)', () => {
  it.each([
    [
      { ANTHROPIC_API_KEY: 'k', CLAUDE_CODE_OAUTH_TOKEN: 'o', CLAUDE_CODE_OAUTH_REFRESH_TOKEN: 'r' },
      ['CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_OAUTH_REFRESH_TOKEN'],
    ],
    [{ ANTHROPIC_AUTH_TOKEN: 't', CLAUDE_CODE_OAUTH_TOKEN: 'o' }, ['CLAUDE_CODE_OAUTH_TOKEN']],
    // claude sends a gateway's token and the key together: both stay.
    [{ ANTHROPIC_AUTH_TOKEN: 't', ANTHROPIC_API_KEY: 'k' }, []],
    [{ CLAUDE_CODE_OAUTH_TOKEN: 'o', CLAUDE_CODE_OAUTH_REFRESH_TOKEN: 'r' }, []],
    [{ ANTHROPIC_FOUNDRY_API_KEY: 'f' }, ['ANTHROPIC_FOUNDRY_API_KEY']],
    [{ ANTHROPIC_FOUNDRY_API_KEY: 'f', CLAUDE_CODE_USE_FOUNDRY: '0' }, ['ANTHROPIC_FOUNDRY_API_KEY']],
    [{ ANTHROPIC_FOUNDRY_API_KEY: 'f', CLAUDE_CODE_USE_FOUNDRY: '1' }, []],
    [{ CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'p' }, ['CLAUDE_CODE_CLIENT_KEY_PASSPHRASE']],
    [{ CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'p', CLAUDE_CODE_CLIENT_KEY: '/k.pem' }, []],
    [{}, []],
  ])('%j → %j', (env, unused) => {
    expect(unusedCredentials(env).sort()).toEqual([...unused].sort());
  });
});
