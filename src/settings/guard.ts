import type { JsonObject } from './file.js';

/** The top-level key where init records what it added, so uninstall removes exactly that. */
export const MARKER_KEY = 'agentbox';
export const GUARD_MARK = '# agentbox-guard';

/**
 * Repo-wide rules for every Claude session in this repository, inside a run or not: the ledger
 * is not the agent's to read (self-poisoning), and the human gate is not the agent's to use.
 */
export const DENY_RULES = [
  'Read(./.agents/**)',
  'Bash(agentbox merge:*)',
  'Bash(agentbox discard:*)',
  'Bash(npx agentbox merge:*)',
  'Bash(npx agentbox discard:*)',
] as const;

const GUARD_REASON =
  'agentbox: the .agents/ run ledger and agentbox merge/discard are for humans only; an agent may not use them';

/**
 * Backs the deny rules where Claude Code's own command parsing does not reach (`bash -c "cat …"`,
 * `python3 -c …`). Plain POSIX sh: it runs only for Bash commands that name the ledger or the gate
 * (GUARD_CONDITIONS), prints nothing unless it denies, and needs no agentbox installation, so it
 * is harmless for teammates who never run agentbox.
 */
export const GUARD_COMMAND =
  'case "$(cat)" in *.agents/runs*|*.agents/INDEX*|*.agents/pointers*|*.agents/latest*|*"agentbox merge"*|*"agentbox discard"*) ' +
  `printf '%s\\n' '${JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: GUARD_REASON,
    },
  })}';; esac ${GUARD_MARK} v1`;

/**
 * NOTE: each entry runs only when its `if` matches the command (checked inside Claude Code, no
 * process started): the guard costs nothing on the Bash calls that do not name the ledger or the
 * gate (measured with bench/hooks.bench.ts). A Claude Code that does not know `if` runs the guard on
 * every Bash call instead: slower, equally safe.
 */
export const GUARD_CONDITIONS = [
  'Bash(*.agents*)',
  'Bash(*agentbox merge*)',
  'Bash(*agentbox discard*)',
] as const;
export const GUARD_GROUP: JsonObject = {
  matcher: 'Bash',
  hooks: GUARD_CONDITIONS.map((condition) => ({
    type: 'command',
    if: condition,
    command: GUARD_COMMAND,
    timeout: 10,
  })),
};
export const GUARD_EVENT = 'PreToolUse';
