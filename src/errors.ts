/**
 * The one error type agentbox throws on purpose. Everything below the CLI throws it; only the
 * CLI's main turns it into a message and an exit code.
 */
export type ErrorCode =
  | 'USAGE'
  | 'NOT_A_GIT_REPO'
  | 'BARE_REPO'
  | 'NOT_INITIALIZED'
  | 'LEDGER_CARRIED'
  | 'LEDGER_LINKED'
  | 'SETTINGS_INVALID_JSON'
  | 'SETTINGS_BAD_SHAPE'
  | 'CONFIG_INVALID'
  | 'PERMISSION_DENIED'
  | 'RUN_NOT_FOUND'
  | 'RUN_NAME_INVALID'
  | 'RUN_AMBIGUOUS'
  | 'RUN_CORRUPT'
  | 'CLAUDE_NOT_FOUND'
  | 'GIT_FAILED'
  | 'IO_FAILED'
  | 'CHECK_FAILED'
  | 'NO_COMMITS'
  | 'BAD_REVISION'
  | 'BRANCH_EXISTS'
  | 'PATH_EXISTS'
  | 'WORKTREE_FAILED'
  | 'MERGE_CONFLICT'
  | 'HUMAN_GATE'
  | 'CONFIG_CHANGED'
  | 'SANDBOX_UNAVAILABLE'
  | 'TRUST_REQUIRED'
  | 'SETTINGS_INVALID'
  | 'MERGE_REFUSED'
  | 'TEMPLATE_INVALID'
  | 'RUN_ACTIVE'
  | 'UNSAVED_CHANGES'
  | 'PATCH_TOO_LARGE';

export class AgentboxError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly hint: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { hint?: string; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentboxError';
    this.code = code;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? (code === 'USAGE' ? 2 : 1);
  }
}

export function isAgentboxError(error: unknown): error is AgentboxError {
  return error instanceof AgentboxError;
}

/** Node's errno code of a failed system call, if there is one. */
export function errnoCode(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return error.code;
  return undefined;
}

/**
 * Turns a failed file-system call into an AgentboxError that names the path and what to do.
 * Anything that is not a permission or space problem is rethrown untouched.
 */
export function fsError(error: unknown, action: string, path: string): AgentboxError {
  // Already said well (a log that is a link: src/util/append.ts).
  if (error instanceof AgentboxError) return error;
  const code = errnoCode(error);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new AgentboxError('PERMISSION_DENIED', `cannot ${action} ${path}: permission denied (${code})`, {
      hint: 'check the permissions of that path (ls -ld), or run agentbox as a user who can write there',
      cause: error,
    });
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new AgentboxError('IO_FAILED', `cannot ${action} ${path}: no space left on device (${code})`, {
      hint: 'free some disk space and run the command again',
      cause: error,
    });
  }
  return new AgentboxError(
    'IO_FAILED',
    `cannot ${action} ${path}: ${(error as Error)?.message ?? String(error)}`,
    {
      cause: error,
    },
  );
}
