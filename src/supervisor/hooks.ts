import { type AirlockScope, judgeToolUse } from '../airlock/guard.js';
import type { HookAnswer, HookHandler, HookInput } from '../endpoint/server.js';
import type { EventLog } from '../run/events.js';

export interface Denial {
  /** The tool call's id (from the hook input or the stream), to match the two records of one refusal. */
  readonly toolUseId?: string;
  readonly tool: string;
  readonly rule: string;
  readonly reason: string;
}

export interface RunHookOptions {
  readonly scope: AirlockScope;
  readonly log: EventLog;
  /** The directory claude runs in: relative tool paths are resolved against the hook's cwd, else this. */
  readonly launchDir: string;
  readonly onDenial?: (denial: Denial) => void;
  /** Decides at Stop; absent means "let it stop". Issue-4 supervisor plugs in here. */
  readonly onStop?: (input: HookInput) => Promise<HookAnswer | undefined>;
  readonly onEvent?: (event: string, input: HookInput) => void;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * What a run's endpoint does with each hook: PreToolUse goes through the airlock (a refusal is
 * logged and the model is told why); the other events are logged and passed on.
 * NOTE: an allowed call answers `{}`, not `allow`: "allow" would skip Claude Code's own permission
 * checks for that call.
 */
export function createRunHookHandler(options: RunHookOptions): HookHandler {
  return async (event, input) => {
    options.onEvent?.(event, input);
    if (event === 'PreToolUse') {
      const tool = str(input.tool_name) ?? '';
      const verdict = judgeToolUse(
        options.scope,
        tool,
        input.tool_input,
        str(input.cwd) ?? options.launchDir,
      );
      if (verdict.allow) return {};
      options.log.append({
        event,
        tool,
        decision: 'deny',
        rule: verdict.rule,
        reason: verdict.reason,
        input: input.tool_input,
      });
      const toolUseId = str(input.tool_use_id);
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
    }
    if (event === 'Stop' && options.onStop) return (await options.onStop(input)) ?? {};
    if (event !== 'PostToolUse') options.log.append({ event, session_id: input.session_id });
    return {};
  };
}
