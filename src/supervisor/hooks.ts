import { type AirlockScope, judgeToolUse } from '../airlock/guard.js';
import type { HookAnswer, HookHandler, HookInput } from '../endpoint/server.js';
import type { EventLog } from '../ledger/events.js';
import type { Supervisor } from './supervisor.js';

export interface Denial {
  /** The tool call's id (from the hook input or the stream), to match the two records of one refusal. */
  readonly toolUseId?: string;
  readonly tool: string;
  readonly rule: string;
  readonly reason: string;
  /** What the call asked for (a command, a path), cut short. */
  readonly input?: string;
  /** When it was refused (ISO 8601), where known: a refusal found at the run's end keeps its time. */
  readonly at?: string;
}

export interface RunHookOptions {
  readonly scope: AirlockScope;
  readonly log: EventLog;
  /** The directory claude runs in: relative tool paths are resolved against the hook's cwd, else this. */
  readonly launchDir: string;
  readonly supervisor: Supervisor;
  readonly onDenial?: (denial: Denial) => void;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * What a run's endpoint does with each hook: PreToolUse first goes through the airlock (a refusal
 * is logged and the model is told why); then every event goes to the supervisor, whose answer to
 * Stop is the run's next instruction (or none).
 * NOTE: an allowed call answers `{}`, not `allow`: "allow" would skip Claude Code's own permission
 * checks for that call.
 */
export function createRunHookHandler(options: RunHookOptions): HookHandler {
  // NOTE: one tool call can reach the endpoint more than once (a Bash command matching two of the
  // guard's `if` conditions runs two hooks): it is judged, logged and counted once.
  const judged = new Map<string, HookAnswer>();
  const judge = (input: HookInput): HookAnswer | undefined => {
    const tool = str(input.tool_name) ?? '';
    const verdict = judgeToolUse(options.scope, tool, input.tool_input, str(input.cwd) ?? options.launchDir);
    if (verdict.allow) return undefined;
    const toolUseId = str(input.tool_use_id);
    options.log.append({
      event: 'PreToolUse',
      source: 'guard',
      ...(toolUseId ? { toolUseId } : {}),
      tool,
      decision: 'deny',
      rule: verdict.rule,
      reason: verdict.reason,
      input: input.tool_input,
    });
    options.onDenial?.({
      ...(toolUseId ? { toolUseId } : {}),
      tool,
      rule: verdict.rule,
      reason: verdict.reason,
    });
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: verdict.reason,
      },
    };
  };
  return async (event, input) => {
    if (event === 'PreToolUse') {
      const id = str(input.tool_use_id);
      const earlier = id ? judged.get(id) : undefined;
      if (earlier) return earlier;
      const denied = judge(input);
      if (id) judged.set(id, denied ?? {});
      if (denied) return denied;
    }
    return (await options.supervisor.onEvent(event, input)) ?? {};
  };
}
