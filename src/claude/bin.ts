import path from 'node:path';
import which from 'which';
import type { Config } from '../config/schema.js';
import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';
import { isExecutableFile } from '../util/fs.js';

export type ClaudeBinSource = 'AGENTBOX_CLAUDE_BIN' | 'config' | 'PATH';

export interface ClaudeBin {
  readonly path: string;
  readonly source: ClaudeBinSource;
}

/**
 * Finds the Claude Code binary: AGENTBOX_CLAUDE_BIN, then the config's `claude.bin`, then
 * `claude` on PATH. A value that names a missing file is an error naming where the value came
 * from: falling through to another binary would hide a typo.
 */
export function findClaudeBin(options: {
  env: Env;
  config: Config;
  repoRoot: string | undefined;
  cwd: string;
}): ClaudeBin {
  const fromEnv = options.env.AGENTBOX_CLAUDE_BIN;
  if (fromEnv)
    return {
      path: resolveBin(fromEnv, options.cwd, options.env, 'AGENTBOX_CLAUDE_BIN'),
      source: 'AGENTBOX_CLAUDE_BIN',
    };
  const fromConfig = options.config.claude.bin;
  if (fromConfig) {
    const base = options.repoRoot ?? options.cwd;
    return { path: resolveBin(fromConfig, base, options.env, 'config claude.bin'), source: 'config' };
  }
  return { path: resolveBin('claude', options.cwd, options.env, 'PATH'), source: 'PATH' };
}

function resolveBin(value: string, base: string, env: Env, source: string): string {
  if (value.includes('/')) {
    const full = path.resolve(base, value);
    if (!isExecutableFile(full)) {
      throw new AgentboxError(
        'CLAUDE_NOT_FOUND',
        `Claude Code binary not found or not executable: ${full} (from ${source})`,
        {
          hint: 'fix the path, or install Claude Code: npm install -g @anthropic-ai/claude-code',
        },
      );
    }
    return full;
  }
  // NOTE: with an empty path `which` falls back to the current directory; no PATH means not found.
  const found = env.PATH ? which.sync(value, { nothrow: true, path: env.PATH }) : null;
  if (!found) {
    throw new AgentboxError(
      'CLAUDE_NOT_FOUND',
      `Claude Code binary "${value}" not found on PATH (from ${source})`,
      {
        hint: 'install it (npm install -g @anthropic-ai/claude-code), or set AGENTBOX_CLAUDE_BIN=/path/to/claude',
      },
    );
  }
  return found;
}

/** `claude --version` → "2.1.330"; throws with the output when it is not a version. */
export async function claudeVersion(bin: string, env: Env): Promise<string> {
  // Loaded when used: execa costs ~27 ms to load, which a run that never needs it should not pay.
  const { execa } = await import('execa');
  const result = await execa(bin, ['--version'], {
    env: { PATH: env.PATH, HOME: env.HOME },
    extendEnv: false,
    timeout: 20_000,
    reject: false,
    stdin: 'ignore',
  });
  const match = /(\d+\.\d+\.\d+)/.exec(result.stdout);
  if (result.exitCode !== 0 || !match) {
    const output = `${result.stdout}${result.stderr}`.trim().slice(0, 200);
    throw new AgentboxError(
      'CLAUDE_NOT_FOUND',
      `${bin} --version failed (exit ${result.exitCode ?? result.signal}): ${output}`,
      {
        hint: 'check that this is the Claude Code CLI, or reinstall it',
      },
    );
  }
  return match[1]!;
}
