import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from '../helpers/sources.js';

/**
 * SUP-1 (mandatory supervision), held by the code's shape: every model call goes through Claude
 * Code launched by agentbox with its hooks. Only src/claude/ starts the Claude Code binary, and
 * nothing talks to a model API (or any HTTP server) itself.
 */

/** Clients a model API could be called with, and the calls that reach an HTTP server. */
const MODEL_CLIENTS =
  /from ['"](@anthropic-ai\/sdk|openai|axios|node-fetch|undici|got|ky|@anthropic-ai\/claude-code)['"]/;
const HTTP_CALLS = /\bfetch\(|\bhttps?\.(request|get)\(|new XMLHttpRequest|new WebSocket\(/;
/** A process started with something that names the Claude Code binary. */
const CLAUDE_SPAWN =
  /\b(spawnOwned|spawn|execa|execFile|execFileSync|spawnSync)\(\s*[^,()]*(claude|Claude|\bbin\b)/;
/** Loading node-pty (a type-only import loads nothing). */
const PTY_IMPORT =
  /^import (?!type )[^;]*from ['"](@lydell\/)?node-pty['"]|import\(['"](@lydell\/)?node-pty['"]\)/m;

/**
 * The one request allowed: doctor's reachability probe, `POST /v1/messages/count_tokens` (issue
 * 29), which calls no model — it only shows that something answers at the base URL. One file, one
 * fetch, and no other API path in it.
 */
function isModelProbe(rel: string, code: string): boolean {
  return (
    rel === path.join('claude', 'probe.ts') &&
    (code.match(/\bfetch\(/g) ?? []).length === 1 &&
    (code.match(/\/v1\/[a-z_/]+/g) ?? []).every((p) => p === '/v1/messages/count_tokens')
  );
}

/** What in one source file breaks the rule (relative path → problems). */
function problemsOf(rel: string, text: string): string[] {
  const out: string[] = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  if (MODEL_CLIENTS.test(code)) out.push(`${rel} imports an HTTP client for a model API`);
  if (HTTP_CALLS.test(code) && !isModelProbe(rel, code)) out.push(`${rel} makes an HTTP request itself`);
  if (!rel.startsWith(`claude${path.sep}`)) {
    if (CLAUDE_SPAWN.test(code)) out.push(`${rel} starts the Claude Code binary outside src/claude/`);
    if (PTY_IMPORT.test(code)) out.push(`${rel} loads node-pty outside src/claude/`);
  }
  return out;
}

describe('architecture: agentbox never calls a model itself (SUP-1)', () => {
  it('only src/claude/ starts Claude Code, and nothing makes an HTTP request', () => {
    const problems = sources(SRC).flatMap((file) =>
      problemsOf(path.relative(SRC, file), fs.readFileSync(file, 'utf8')),
    );
    expect(problems).toEqual([]);
  });

  it('the check finds each kind of breach (it can fail)', () => {
    expect(problemsOf('run/x.ts', "import Anthropic from '@anthropic-ai/sdk';")).toHaveLength(1);
    expect(problemsOf('run/x.ts', "await fetch('https://api.anthropic.com/v1/messages')")).toHaveLength(1);
    expect(problemsOf('run/x.ts', 'const c = spawnOwned(input.claudeBin, args, {})')).toHaveLength(1);
    expect(problemsOf('supervisor/x.ts', "execa(options.bin, ['-p'])")).toHaveLength(1);
    expect(problemsOf('interactive/x.ts', "const pty = await import('node-pty')")).toHaveLength(1);
    expect(problemsOf('interactive/x.ts', "import { spawn } from '@lydell/node-pty';")).toHaveLength(1);
    expect(problemsOf('claude/spawn.ts', 'return spawnOwned(bin, args, options);')).toEqual([]);
    expect(problemsOf('git/x.ts', "execa('git', ['status'])")).toEqual([]);
    expect(problemsOf('interactive/x.ts', "import type { IPty } from '@lydell/node-pty';")).toEqual([]);
    expect(problemsOf('run/x.ts', '// fetch(url) in a comment')).toEqual([]);
    const probe = "await fetch(base + '/v1/messages/count_tokens', {})";
    expect(problemsOf(path.join('claude', 'probe.ts'), probe)).toEqual([]);
    expect(problemsOf(path.join('claude', 'probe.ts'), probe.replace('/count_tokens', ''))).toHaveLength(1);
    expect(problemsOf(path.join('claude', 'probe.ts'), `${probe}; ${probe}`)).toHaveLength(1);
    expect(problemsOf(path.join('doctor', 'x.ts'), probe)).toHaveLength(1);
  });
});
