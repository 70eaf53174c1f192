import { AgentboxError } from '../errors.js';

/** Everything one headless `claude -p` launch needs; `buildClaudeArgs` turns it into argv. */
export interface ClaudeLaunch {
  /** Passed as ONE argument, byte for byte, after `--` (or on standard input, see promptOnStdin). */
  prompt: string;
  /**
   * The prompt goes on claude's standard input instead of argv (the caller writes it): no limit
   * on its size (one argv string may hold 128 KiB on Linux) and never read as a flag.
   */
  promptOnStdin?: boolean;
  /**
   * `--input-format=stream-json`: the turn goes on standard input as a JSON user message, which
   * claude waits for once started (a revision's standby, src/run/standby/). Implies promptOnStdin.
   */
  streamInput?: boolean;
  /** Fresh runs: `--session-id <uuid>`. */
  sessionId: string;
  /** `--resume <sessionId>` instead of `--session-id` (never `--continue`: it picks by recency). */
  resume?: boolean;
  /** What the model is offered. An empty list offers no tool at all. */
  tools: string[];
  /** Pre-approved rules; may hold patterns like `Bash(git log:*)` and `Edit(//abs/**)`. */
  allowedTools: string[];
  disallowedTools?: string[];
  appendSystemPrompt?: string;
  /** Sent inline as JSON. NOTE: one invalid entry makes claude drop the whole source silently. */
  settings?: object;
  /** A settings file instead (wins over `settings`): for settings that hold a secret. */
  settingsFile?: string;
  model?: string | null;
  permissionMode?: string;
  /** The user's extra flags (config). They may not take over the flags listed in OWNED_FLAGS. */
  extraArgs?: string[];
  includeHookEvents?: boolean;
  /**
   * false: claude loads no project or local settings and no `.mcp.json` (`--setting-sources=user
   * --strict-mcp-config`): the repository is not trusted, so its hooks, env, helpers, allow rules
   * and MCP servers must not load. Measured with 2.1.330: project hooks, apiKeyHelper and `.mcp.json`
   * servers do not run, `--settings` hooks still fire, and project slash commands are not offered.
   */
  projectSettings?: boolean;
}

/** The flags that keep a repository's own Claude Code settings out of a launch (see projectSettings). */
export const NO_PROJECT_SETTINGS = ['--setting-sources=user', '--strict-mcp-config'] as const;

/**
 * Flags whose meaning agentbox owns: letting config set them would break the stream parser, the
 * session bookkeeping or the prompt's position. Matched with and without `=value`.
 */
export const OWNED_FLAGS: readonly string[] = [
  '-p',
  '--print',
  '--output-format',
  '--input-format',
  '--verbose',
  '--session-id',
  '-r',
  '--resume',
  '-c',
  '--continue',
  '--fork-session',
  '--bg',
  '--background',
  '--tools',
  '--allowedTools',
  '--allowed-tools',
  '--disallowedTools',
  '--disallowed-tools',
  '--settings',
  '--permission-mode',
  '--model',
  '--append-system-prompt',
  '--setting-sources',
  '--strict-mcp-config',
  '--mcp-config',
];

// Linux refuses a single argv string longer than MAX_ARG_STRLEN (128 KiB, terminating NUL included)
// with E2BIG: better a clear error here than a spawn failure.
export const MAX_ARG_BYTES = 128 * 1024 - 1;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOOL_NAME_RE = /^[A-Za-z0-9_*.:-]+$/;

/**
 * The argv (without the binary) for `claude -p … --output-format stream-json --verbose`.
 *
 * Measured against Claude Code 2.1.330 (test/e2e/claude-args.test.ts):
 * - `-p -x` fails with `unknown option '-x'`: a prompt starting with `-` cannot follow `-p`.
 * - `--tools`, `--allowedTools`, `--disallowedTools` are variadic: a prompt after them is eaten as
 *   a tool rule (`"…" was read as a value of --allowedTools`).
 * So every valued flag uses the `--flag=value` form (never variadic, a value may start with `-`),
 * and the prompt comes last, after `--`, where nothing is parsed as a flag or a subcommand.
 */
export function buildClaudeArgs(launch: ClaudeLaunch): string[] {
  if (launch.prompt.trim() === '') {
    throw new AgentboxError('USAGE', 'the prompt for claude is empty', {
      hint: 'give the run a task, e.g. agentbox scout "why is the build slow?"',
    });
  }
  if (!UUID_RE.test(launch.sessionId)) {
    throw new AgentboxError('USAGE', `not a session id (a UUID): ${JSON.stringify(launch.sessionId)}`);
  }
  for (const tool of launch.tools) {
    if (!TOOL_NAME_RE.test(tool)) {
      throw new AgentboxError('USAGE', `not a tool name: ${JSON.stringify(tool)}`, {
        hint: 'tools are bare names like Read or Bash; put rules like Bash(git log:*) in allowedTools',
      });
    }
  }
  for (const rule of [...launch.allowedTools, ...(launch.disallowedTools ?? [])]) {
    if (rule.trim() === '') throw new AgentboxError('USAGE', 'an empty tool rule was given');
  }
  const extra = launch.extraArgs ?? [];
  for (const arg of extra) {
    const flag = arg.split('=', 1)[0]!;
    if (arg === '--' || OWNED_FLAGS.includes(flag)) {
      throw new AgentboxError(
        'USAGE',
        `extra claude argument ${JSON.stringify(arg)} is set by agentbox itself`,
        {
          hint: 'remove it from claude.extraArgs in the agentbox config',
        },
      );
    }
  }

  const args = ['-p', '--output-format=stream-json', '--verbose'];
  args.push(launch.resume ? `--resume=${launch.sessionId}` : `--session-id=${launch.sessionId}`);
  // `--tools=` (empty) offers no tool, like `--tools ""`.
  args.push(`--tools=${launch.tools.join(',')}`);
  // One flag per rule: claude's comma splitting never sees two of our rules in one string.
  for (const rule of launch.allowedTools) args.push(`--allowedTools=${rule}`);
  for (const rule of launch.disallowedTools ?? []) args.push(`--disallowedTools=${rule}`);
  if (launch.appendSystemPrompt) args.push(`--append-system-prompt=${launch.appendSystemPrompt}`);
  if (launch.settingsFile) args.push(`--settings=${launch.settingsFile}`);
  else if (launch.settings !== undefined) args.push(`--settings=${JSON.stringify(launch.settings)}`);
  if (launch.model) args.push(`--model=${launch.model}`);
  if (launch.permissionMode) args.push(`--permission-mode=${launch.permissionMode}`);
  if (launch.includeHookEvents) args.push('--include-hook-events');
  if (launch.streamInput) args.push('--input-format=stream-json');
  if (launch.projectSettings === false) args.push(...NO_PROJECT_SETTINGS);
  args.push(...extra);
  if (!launch.promptOnStdin && !launch.streamInput) args.push('--', launch.prompt);

  for (const arg of args) checkArg(arg);
  return args;
}

function checkArg(arg: string): void {
  // NOTE: a NUL cannot travel in argv at all: spawn throws ERR_INVALID_ARG_VALUE.
  if (arg.includes('\0')) {
    throw new AgentboxError(
      'USAGE',
      `a claude argument contains a NUL byte: ${JSON.stringify(arg.slice(0, 60))}`,
    );
  }
  const bytes = Buffer.byteLength(arg, 'utf8');
  if (bytes > MAX_ARG_BYTES) {
    throw new AgentboxError(
      'USAGE',
      `a claude argument is ${bytes} bytes, over the system's limit of ${MAX_ARG_BYTES}: ${JSON.stringify(arg.slice(0, 60))}…`,
      { hint: 'shorten the task: put long material in a file in the repo and name that file in the task' },
    );
  }
}

export interface InteractiveLaunch {
  /** The first message, typed in for the person; none: claude waits at its prompt. */
  readonly prompt?: string;
  readonly sessionId: string;
  /** `--resume <sessionId>` (after a crash) instead of `--session-id` (a fresh session). */
  readonly resume?: boolean;
  readonly allowedTools: readonly string[];
  readonly appendSystemPrompt?: string;
  readonly settings?: object;
  /** A settings file instead (wins over `settings`): for settings that hold a secret. */
  readonly settingsFile?: string;
  readonly model?: string | null;
  /** false: no project or local settings, no `.mcp.json` (see ClaudeLaunch.projectSettings). */
  readonly projectSettings?: boolean;
}

/**
 * The argv (without the binary) for an interactive claude behind a pty: the same flag forms as
 * buildClaudeArgs (`--flag=value`, the prompt last after `--`), without `-p` and the stream.
 */
export function buildInteractiveArgs(launch: InteractiveLaunch): string[] {
  if (!UUID_RE.test(launch.sessionId)) {
    throw new AgentboxError('USAGE', `not a session id (a UUID): ${JSON.stringify(launch.sessionId)}`);
  }
  const args = [launch.resume ? `--resume=${launch.sessionId}` : `--session-id=${launch.sessionId}`];
  for (const rule of launch.allowedTools) args.push(`--allowedTools=${rule}`);
  if (launch.appendSystemPrompt) args.push(`--append-system-prompt=${launch.appendSystemPrompt}`);
  if (launch.settingsFile) args.push(`--settings=${launch.settingsFile}`);
  else if (launch.settings !== undefined) args.push(`--settings=${JSON.stringify(launch.settings)}`);
  if (launch.model) args.push(`--model=${launch.model}`);
  if (launch.projectSettings === false) args.push(...NO_PROJECT_SETTINGS);
  if (launch.prompt?.trim()) args.push('--', launch.prompt);
  for (const arg of args) checkArg(arg);
  return args;
}
