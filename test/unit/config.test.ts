import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import {
  loadConfig,
  PROJECT_CONFIG_FILE,
  projectConfigPath,
  readConfigFile,
  userConfigPath,
} from '../../src/config/load.js';
import { DEFAULT_CONFIG, KNOWN_KEYS } from '../../src/config/schema.js';
import { PROJECT_CONFIG_TEMPLATE } from '../../src/config/template.js';
import type { Env } from '../../src/context.js';
import { AgentboxError } from '../../src/errors.js';
import { tempDir } from '../helpers/git-repo.js';

function thrown(fn: () => unknown): AgentboxError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentboxError) return error;
    throw error;
  }
  throw new Error('expected an AgentboxError, nothing was thrown');
}

describe('parseDuration', () => {
  it.each<[string, number | undefined]>([
    ['250ms', 250],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['30d', 2_592_000_000],
    ['0s', 0],
    ['1.5s', 1500],
    ['0.5m', 30_000],
    ['1.0005s', 1001],
    [' 5m ', 300_000],
    ['5 m', 300_000],
    ['5', undefined],
    ['m', undefined],
    ['', undefined],
    ['-1s', undefined],
    ['.5s', undefined],
    ['5.s', undefined],
    ['5M', undefined],
    ['5min', undefined],
    ['1e3s', undefined],
    ['5s5', undefined],
    ['5w', undefined],
  ])('%j → %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [999, '999ms'],
    [1000, '1s'],
    [59_400, '59s'],
    [60_000, '1m'],
    [90_000, '1m 30s'],
    [3_600_000, '1h'],
    [5_400_000, '1h 30m'],
    [86_400_000, '1d'],
    [3 * 86_400_000 + 5_000, '3d'],
  ])('%i ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('userConfigPath', () => {
  it.each<[string, Env, string | undefined]>([
    [
      'AGENTBOX_CONFIG wins',
      { AGENTBOX_CONFIG: '/etc/ab.yaml', XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' },
      '/etc/ab.yaml',
    ],
    ['then XDG_CONFIG_HOME', { XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' }, '/xdg/agentbox/config.yaml'],
    ['then HOME', { HOME: '/home/u' }, '/home/u/.config/agentbox/config.yaml'],
    [
      'an empty AGENTBOX_CONFIG is unset',
      { AGENTBOX_CONFIG: '', HOME: '/home/u' },
      '/home/u/.config/agentbox/config.yaml',
    ],
    [
      'an empty XDG_CONFIG_HOME is unset',
      { XDG_CONFIG_HOME: '', HOME: '/home/u' },
      '/home/u/.config/agentbox/config.yaml',
    ],
    ['none of them', {}, undefined],
  ])('%s', (_name, env, expected) => {
    expect(userConfigPath(env)).toBe(expected);
  });

  it('puts the project file at the repository root', () => {
    expect(PROJECT_CONFIG_FILE).toBe('agentbox.yaml');
    expect(projectConfigPath('/repo')).toBe('/repo/agentbox.yaml');
  });
});

describe('loadConfig', () => {
  let dir: string;
  let home: string;
  let repo: string;
  beforeEach(() => {
    dir = tempDir();
    home = path.join(dir, 'home');
    repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
  });
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  const homeFile = () => path.join(home, '.config/agentbox/config.yaml');
  const projectFile = () => path.join(repo, 'agentbox.yaml');

  it('is the defaults with no files and no HOME', () => {
    expect(loadConfig({ repoRoot: undefined, env: {} })).toEqual({ config: DEFAULT_CONFIG, sources: [] });
    expect(DEFAULT_CONFIG).toEqual({
      claude: { bin: null, model: null },
      supervisor: {
        mode: 'rules',
        max_iterations: 50,
        max_cost: null,
        timeout: '30s',
        bin: null,
        model: null,
        enabled: true,
        timeout_profile: 'standard',
        max_corrections: 2,
        fail_on_violation: false,
        require_format_validation: true,
        allow_raw_output: true,
      },
      interactive: {
        cwd: null,
        restart_delay: '2s',
        flapping_delay: '30s',
        flap_window: '60s',
        flap_threshold: 3,
        halt_after: 5,
      },
      runs: {
        timeout: null,
        stall_after: '5m',
        worktree_dir: null,
        env_pass: [],
        fix_allowed_tools: ['Bash'],
        verify: null,
        verify_timeout: '10m',
        setup: null,
        setup_timeout: '10m',
        setup_domains: [],
        restart_mode: 'ask',
        notify: null,
        notify_timeout: '10s',
        notify_bell: true,
        max_parallel: 4,
      },
      sandbox: { mode: 'required', allowed_domains: [], deny_read: [], allow_read: [] },
    });
  });

  it('lists the files it looked for, also missing ones', () => {
    expect(loadConfig({ repoRoot: repo, env: { HOME: home } })).toEqual({
      config: DEFAULT_CONFIG,
      sources: [
        { kind: 'user', path: homeFile(), exists: false },
        { kind: 'project', path: projectFile(), exists: false },
      ],
    });
  });

  it.each<[string, () => { env: Env; file: string }]>([
    ['HOME', () => ({ env: { HOME: home }, file: homeFile() })],
    [
      'XDG_CONFIG_HOME',
      () => ({
        env: { HOME: home, XDG_CONFIG_HOME: path.join(dir, 'xdg') },
        file: path.join(dir, 'xdg/agentbox/config.yaml'),
      }),
    ],
    [
      'AGENTBOX_CONFIG',
      () => ({
        env: {
          HOME: home,
          XDG_CONFIG_HOME: path.join(dir, 'xdg'),
          AGENTBOX_CONFIG: path.join(dir, 'mine.yaml'),
        },
        file: path.join(dir, 'mine.yaml'),
      }),
    ],
  ])('reads the user file found through %s', (_name, setup) => {
    const { env, file } = setup();
    write(file, 'claude:\n  bin: /opt/claude\n');
    // A file at a lower-priority location is not read.
    if (file !== homeFile()) write(homeFile(), 'claude:\n  model: ignored\n');
    expect(loadConfig({ repoRoot: undefined, env })).toEqual({
      config: {
        claude: { bin: '/opt/claude', model: null },
        supervisor: DEFAULT_CONFIG.supervisor,
        interactive: DEFAULT_CONFIG.interactive,
        runs: DEFAULT_CONFIG.runs,
        sandbox: DEFAULT_CONFIG.sandbox,
      },
      sources: [{ kind: 'user', path: file, exists: true }],
    });
  });

  it('AGENTBOX_CONFIG naming a file that is not there is an error, not the defaults (a typo dropped the person’s limits)', () => {
    const missing = path.join(dir, 'nope', 'c.yaml');
    const error = thrown(() =>
      loadConfig({ repoRoot: undefined, env: { HOME: home, AGENTBOX_CONFIG: missing } }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe(`AGENTBOX_CONFIG names ${missing}, which does not exist`);
    expect(error.hint).toContain('unset AGENTBOX_CONFIG');
    // The default place may be missing: no settings of the person's, as before.
    expect(loadConfig({ repoRoot: undefined, env: { HOME: home } }).sources).toEqual([
      { kind: 'user', path: homeFile(), exists: false },
    ]);
  });

  it('lets the project file beat the user file, key by key', () => {
    write(homeFile(), 'claude:\n  bin: /opt/claude\n  model: opus\n');
    write(projectFile(), 'claude:\n  model: sonnet\n');
    expect(loadConfig({ repoRoot: repo, env: { HOME: home } })).toEqual({
      config: {
        claude: { bin: '/opt/claude', model: 'sonnet' },
        supervisor: DEFAULT_CONFIG.supervisor,
        interactive: DEFAULT_CONFIG.interactive,
        runs: DEFAULT_CONFIG.runs,
        sandbox: DEFAULT_CONFIG.sandbox,
      },
      sources: [
        { kind: 'user', path: homeFile(), exists: true },
        { kind: 'project', path: projectFile(), exists: true },
      ],
    });
  });

  it('does not read the project file without a repository', () => {
    write(projectFile(), 'claude:\n  model: sonnet\n');
    expect(loadConfig({ repoRoot: undefined, env: { HOME: home } }).config).toEqual(DEFAULT_CONFIG);
  });

  // An empty key is "not set here": the template init writes must not hide the user's settings.
  it.each([
    ['the project template init writes', PROJECT_CONFIG_TEMPLATE, 'opus'],
    ['an empty section', 'claude:\n', 'opus'],
    ['one empty key', 'claude:\n  bin:\n  model: sonnet\n', 'sonnet'],
  ])('keeps the user file’s values under %s', (_name, text, model) => {
    write(homeFile(), 'claude:\n  bin: /opt/claude\n  model: opus\n');
    write(projectFile(), text);
    expect(loadConfig({ repoRoot: repo, env: { HOME: home } }).config).toEqual({
      claude: { bin: '/opt/claude', model },
      supervisor: DEFAULT_CONFIG.supervisor,
      interactive: DEFAULT_CONFIG.interactive,
      runs: DEFAULT_CONFIG.runs,
      sandbox: DEFAULT_CONFIG.sandbox,
    });
  });

  it('reads the template as every key empty', () => {
    expect(readConfigFile(write(projectFile(), PROJECT_CONFIG_TEMPLATE))).toEqual({
      claude: { bin: null, model: null },
      supervisor: {
        mode: null,
        max_iterations: null,
        max_cost: null,
        timeout: null,
        bin: null,
        model: null,
        enabled: null,
        timeout_profile: null,
        max_corrections: null,
        fail_on_violation: null,
        require_format_validation: null,
        allow_raw_output: null,
      },
      interactive: {
        cwd: null,
        restart_delay: null,
        flapping_delay: null,
        flap_window: null,
        flap_threshold: null,
        halt_after: null,
      },
      runs: {
        timeout: null,
        stall_after: null,
        worktree_dir: null,
        env_pass: null,
        fix_allowed_tools: null,
        verify: null,
        verify_timeout: null,
        setup: null,
        setup_timeout: null,
        setup_domains: null,
        restart_mode: null,
        notify: null,
        notify_timeout: null,
        notify_bell: null,
        max_parallel: null,
      },
      sandbox: { mode: null, allowed_domains: null, deny_read: null, allow_read: null },
    });
  });

  it.each<[string, string, object | undefined]>([
    ['an empty file', '', {}],
    ['only comments', '# nothing here\n', {}],
    ['an empty section', 'claude:\n', { claude: null }],
    [
      'both keys',
      'claude:\n  bin: ./tools/claude\n  model: opus\n',
      { claude: { bin: './tools/claude', model: 'opus' } },
    ],
  ])('reads %s', (_name, text, expected) => {
    expect(readConfigFile(write(projectFile(), text))).toEqual(expected);
  });

  it('reads a missing file as undefined', () => {
    expect(readConfigFile(projectFile())).toBeUndefined();
  });

  it.each([
    [
      'an unclosed flow sequence',
      'claude:\n  bin: [unclosed\n',
      'at line 3, column 1: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
    ['a tab indent', 'claude:\n\tbin: x\n', 'at line 2, column 1: Tabs are not allowed as indentation'],
    ['an unclosed quote', 'claude:\n  bin: "x\n', 'at line 3, column 1: Missing closing "quote'],
  ])('names the file and the line of invalid YAML: %s', (_name, text, where) => {
    const file = write(projectFile(), text);
    const error = thrown(() => readConfigFile(file));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(`${file} is not valid YAML ${where}`);
    expect(error.hint).toBe('fix the file, or delete it and run "agentbox init" to write a fresh one');
  });

  it.each([
    [
      'an alias naming no anchor',
      'runs:\n  env_pass: *nope\n',
      'Unresolved alias (the anchor must be set before the alias): nope',
    ],
    [
      'an alias bomb (billion laughs)',
      `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ).join('\n')}\n`,
      'Excessive alias count indicates a resource exhaustion attack',
    ],
  ])(
    'names the file of YAML whose value cannot be built: %s (a repository’s error, not a crash)',
    (_name, text, said) => {
      const file = write(projectFile(), text);
      const error = thrown(() => readConfigFile(file));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toBe(`${file} is not valid YAML: ${said}`);
      expect(error.hint).toBe('fix the file, or delete it and run "agentbox init" to write a fresh one');
      // The person's own file: init does not write it, so the hint does not say so.
      const own = path.join(path.dirname(file), 'config.yaml');
      fs.writeFileSync(own, text);
      expect(thrown(() => readConfigFile(own)).hint).toBe(
        "fix the file, or move it aside (agentbox then uses its defaults and the repository's agentbox.yaml)",
      );
    },
  );

  it.each([
    ['a misspelt nested key', 'claude:\n  bni: x\n', 'claude.bni', 'did you mean "claude.bin"?'],
    ['a misspelt section', 'claud:\n  bin: x\n', 'claud', 'did you mean "claude"?'],
    ['a case slip', 'claude:\n  Model: x\n', 'claude.Model', 'did you mean "claude.model"?'],
    ['a key like nothing known', 'timeout: 5\n', 'timeout', `known settings: ${KNOWN_KEYS.join(', ')}`],
  ])('rejects %s with a suggestion', (_name, text, key, hint) => {
    const file = write(projectFile(), text);
    const error = thrown(() => readConfigFile(file));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe(`${file}: unknown setting "${key}"`);
    expect(error.hint).toBe(hint);
  });

  it.each([
    [
      'a number for a string',
      'claude:\n  bin: 3\n',
      'claude.bin: Invalid input: expected string, received number (it is 3)',
    ],
    [
      'a list for a string',
      'claude:\n  model: [a]\n',
      'claude.model: Invalid input: expected string, received array (it is ["a"])',
    ],
    [
      'an empty string',
      'claude:\n  model: ""\n',
      'claude.model: Too small: expected string to have >=1 characters (it is "")',
    ],
    [
      // The watchdog never calls a heartbeat younger than 60 s stale: a shorter one was ignored silently (issue 38).
      'a stall_after the watchdog cannot honour',
      'runs:\n  stall_after: 30s\n',
      'runs.stall_after: must be at least 1m: the watchdog never calls a run STALLED whose supervisor reported within the last 60 s (it reports every 15 s) (it is "30s")',
    ],
    [
      'a timeout of 0 (it was taken, then refused at the run’s start without the file’s name)',
      'runs:\n  timeout: 0s\n',
      'runs.timeout: must be a duration longer than 0, such as "90s", "30m" or "2h" (it is "0s")',
    ],
    ['a scalar section', 'claude: 5\n', 'claude: Invalid input: expected object, received number (it is 5)'],
    ['a list at the top', '- claude\n', 'the file: Invalid input: expected object, received array'],
  ])('rejects %s, naming the key', (_name, text, problem) => {
    const file = write(projectFile(), text);
    const error = thrown(() => readConfigFile(file));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe(`${file}: ${problem}`);
    expect(error.hint).toBe('see docs/configuration.md in agentbox for the allowed values');
  });

  it('fails on a bad user file with that file’s path, before reading the project file', () => {
    const file = write(homeFile(), 'claude:\n  modle: opus\n');
    write(projectFile(), 'claude: [\n');
    const error = thrown(() => loadConfig({ repoRoot: repo, env: { HOME: home } }));
    expect(error.message).toBe(`${file}: unknown setting "claude.modle"`);
    expect(error.hint).toBe('did you mean "claude.model"?');
  });
});
