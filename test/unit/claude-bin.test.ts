import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { claudeVersion, findClaudeBin } from '../../src/claude/bin.js';
import { type Config, DEFAULT_CONFIG } from '../../src/config/schema.js';
import type { Env } from '../../src/context.js';
import { AgentboxError } from '../../src/errors.js';
import { tempDir } from '../helpers/git-repo.js';

// Fake binaries are fine here: this is binary discovery, not Claude Code's behaviour.
const VERSION_SCRIPT =
  '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi\nexit 3\n';

function thrown(fn: () => unknown): AgentboxError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentboxError) return error;
    throw error;
  }
  throw new Error('expected an AgentboxError, nothing was thrown');
}

const withBin = (bin: string | null): Config => ({ ...DEFAULT_CONFIG, claude: { bin, model: null } });

let dir: string;
beforeEach(() => {
  dir = tempDir();
});

/** Writes an executable script (or a plain file with mode 0o644) and returns its path. */
function script(rel: string, body = VERSION_SCRIPT, mode = 0o755): string {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body, { mode });
  fs.chmodSync(file, mode);
  return file;
}

describe('findClaudeBin', () => {
  let onPath: string;
  let fromConfig: string;
  let fromEnv: string;
  let env: Env;
  beforeEach(() => {
    onPath = script('path-bin/claude');
    fromConfig = script('config/claude');
    fromEnv = script('env/claude');
    env = { PATH: path.join(dir, 'path-bin') };
  });
  const find = (options: { env?: Env; config?: Config; repoRoot?: string; cwd?: string }) =>
    findClaudeBin({
      env: options.env ?? env,
      config: options.config ?? DEFAULT_CONFIG,
      repoRoot: options.repoRoot,
      cwd: options.cwd ?? dir,
    });

  it('AGENTBOX_CLAUDE_BIN beats the config, which beats PATH', () => {
    expect(find({ env: { ...env, AGENTBOX_CLAUDE_BIN: fromEnv }, config: withBin(fromConfig) })).toEqual({
      path: fromEnv,
      source: 'AGENTBOX_CLAUDE_BIN',
    });
    expect(find({ config: withBin(fromConfig) })).toEqual({ path: fromConfig, source: 'config' });
    expect(find({})).toEqual({ path: onPath, source: 'PATH' });
  });

  it('treats an empty AGENTBOX_CLAUDE_BIN as unset', () => {
    expect(find({ env: { ...env, AGENTBOX_CLAUDE_BIN: '' } })).toEqual({ path: onPath, source: 'PATH' });
  });

  it('looks a bare name up on the PATH it is given, in order', () => {
    const first = script('first/claude');
    expect(
      find({ env: { PATH: [path.join(dir, 'empty'), path.dirname(first), path.dirname(onPath)].join(':') } }),
    ).toEqual({
      path: first,
      source: 'PATH',
    });
  });

  it.each([
    [
      'AGENTBOX_CLAUDE_BIN',
      (name: string) => ({ env: { ...env, AGENTBOX_CLAUDE_BIN: name } }),
      'AGENTBOX_CLAUDE_BIN',
    ],
    ['config claude.bin', (name: string) => ({ config: withBin(name) }), 'config'],
  ] as const)('looks a bare name from %s up on PATH', (_name, options, source) => {
    const other = script('path-bin/claude-nightly');
    expect(find(options('claude-nightly'))).toEqual({ path: other, source });
  });

  it('resolves a relative AGENTBOX_CLAUDE_BIN against cwd', () => {
    expect(
      find({ env: { ...env, AGENTBOX_CLAUDE_BIN: './env/claude' }, repoRoot: path.join(dir, 'config') }),
    ).toEqual({ path: fromEnv, source: 'AGENTBOX_CLAUDE_BIN' });
  });

  it('resolves a relative config path against the repository root, else cwd', () => {
    const inRepo = script('repo/tools/claude');
    expect(
      find({ config: withBin('tools/claude'), repoRoot: path.join(dir, 'repo'), cwd: path.join(dir, 'env') }),
    ).toEqual({ path: inRepo, source: 'config' });
    expect(find({ config: withBin('./config/claude') })).toEqual({ path: fromConfig, source: 'config' });
  });

  it.each([
    ['a missing file', 'nope/claude'],
    ['a file that is not executable', 'plain/claude'],
    ['a folder', 'path-bin'],
  ])('names the source of %s instead of falling back', (_name, rel) => {
    script('plain/claude', VERSION_SCRIPT, 0o644);
    const full = path.join(dir, rel);
    const fromEnvError = thrown(() => find({ env: { ...env, AGENTBOX_CLAUDE_BIN: full } }));
    expect(fromEnvError.code).toBe('CLAUDE_NOT_FOUND');
    expect(fromEnvError.message).toBe(
      `Claude Code binary not found or not executable: ${full} (from AGENTBOX_CLAUDE_BIN)`,
    );
    expect(fromEnvError.hint).toBe(
      'fix the path, or install Claude Code: npm install -g @anthropic-ai/claude-code',
    );
    const fromConfigError = thrown(() => find({ config: withBin(full) }));
    expect(fromConfigError.message).toBe(
      `Claude Code binary not found or not executable: ${full} (from config claude.bin)`,
    );
  });

  it.each([
    ['a PATH folder that does not exist', () => '/nonexistent/bin'],
    [
      'a PATH folder without claude',
      () => {
        fs.mkdirSync(path.join(dir, 'none'));
        return path.join(dir, 'none');
      },
    ],
  ])('fails with %s, though the test runner’s PATH has one', (_name, makePath) => {
    const error = thrown(() => find({ env: { PATH: makePath() } }));
    expect(error.code).toBe('CLAUDE_NOT_FOUND');
    expect(error.message).toBe('Claude Code binary "claude" not found on PATH (from PATH)');
    expect(error.hint).toBe(
      'install it (npm install -g @anthropic-ai/claude-code), or set AGENTBOX_CLAUDE_BIN=/path/to/claude',
    );
  });

  it('skips a claude on PATH that is not executable', () => {
    const plain = script('plain/claude', VERSION_SCRIPT, 0o644);
    expect(find({ env: { PATH: `${path.dirname(plain)}:${path.dirname(onPath)}` } })).toEqual({
      path: onPath,
      source: 'PATH',
    });
  });

  it('names the bare name that is missing', () => {
    const error = thrown(() => find({ config: withBin('claude-beta') }));
    expect(error.message).toBe('Claude Code binary "claude-beta" not found on PATH (from config claude.bin)');
  });
});

describe('claudeVersion', () => {
  const env: Env = { PATH: '/usr/bin:/bin', HOME: '/nonexistent' };

  it('reads the version from `claude --version`', async () => {
    expect(await claudeVersion(script('claude'), env)).toBe('2.1.330');
  });

  it.each([
    ['prints no version', '#!/bin/sh\necho "hello there"\n', 'exit 0', 'hello there'],
    ['prints nothing', '#!/bin/sh\nexit 0\n', 'exit 0', ''],
    [
      'exits non-zero',
      '#!/bin/sh\necho "2.1.330 (Claude Code)"\necho "broken install" >&2\nexit 3\n',
      'exit 3',
      '2.1.330 (Claude Code)broken install',
    ],
    [
      'only writes to stderr',
      '#!/bin/sh\necho "error: no such option" >&2\nexit 1\n',
      'exit 1',
      'error: no such option',
    ],
  ])('fails with the output when the binary %s', async (_name, body, exit, output) => {
    const bin = script('claude', body);
    const error = await claudeVersion(bin, env).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AgentboxError);
    expect((error as AgentboxError).code).toBe('CLAUDE_NOT_FOUND');
    expect((error as AgentboxError).message).toBe(`${bin} --version failed (${exit}): ${output}`);
    expect((error as AgentboxError).hint).toBe('check that this is the Claude Code CLI, or reinstall it');
  });

  it('gives the binary only PATH and HOME', async () => {
    const bin = script('claude', '#!/bin/sh\necho "$HOME:[$SECRET]:$PATH"\nexit 1\n');
    const error = await claudeVersion(bin, { ...env, SECRET: 'x' }).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).toBe(`${bin} --version failed (exit 1): /nonexistent:[]:/usr/bin:/bin`);
  });
});
