import { contentEvents } from './content.js';
import type { ResultEvent, StreamEvent } from './events.js';
import { isObject, type Json, num, str, strings } from './fields.js';
import { API_KEYS, modelUsages, tokenUsage, usageEvent } from './usage.js';

/** The events of one line. A blank or non-JSON line gives []; this never throws. */
export function parseStreamLine(line: string): StreamEvent[] {
  if (line.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [];
  }
  if (!isObject(value) || typeof value.type !== 'string') return [];
  const type = value.type;
  const subtype = str(value.subtype);
  const other: StreamEvent = { kind: 'other', type: subtype ? `${type}/${subtype}` : type };

  if (type === 'system' && subtype === 'init') {
    const sessionId = str(value.session_id);
    if (!sessionId) return [other];
    const init: StreamEvent = {
      kind: 'init',
      sessionId,
      tools: strings(value.tools),
      slashCommands: strings(value.slash_commands),
    };
    const model = str(value.model);
    const cwd = str(value.cwd);
    const version = str(value.claude_code_version);
    if (model !== undefined) init.model = model;
    if (cwd !== undefined) init.cwd = cwd;
    if (version !== undefined) init.version = version;
    return [init];
  }
  if (type === 'system' && (subtype === 'hook_started' || subtype === 'hook_response')) {
    const hook: StreamEvent = {
      kind: 'hook',
      phase: subtype === 'hook_started' ? 'started' : 'response',
      event: str(value.hook_event) ?? str(value.hook_name) ?? '',
    };
    const outcome = str(value.outcome);
    if (outcome !== undefined) hook.outcome = outcome;
    return [hook];
  }
  if (type === 'system' && subtype === 'permission_denied') {
    return [
      {
        kind: 'permission_denied',
        toolUseId: str(value.tool_use_id) ?? '',
        tool: str(value.tool_name) ?? '',
        message: str(value.message) ?? '',
      },
    ];
  }
  if (type === 'result') return [parseResult(value)];
  if (type === 'assistant' || type === 'user') {
    const events = messageEvents(type, value);
    return events.length > 0 ? events : [other];
  }
  return [other];
}

/** An assistant line's usage and content, a user line's tool results (with the line's time). */
function messageEvents(type: 'assistant' | 'user', value: Json): StreamEvent[] {
  const usage = type === 'assistant' ? usageEvent(value) : [];
  const events = [...usage, ...contentEvents(type, value.message, value.tool_result_meta)];
  // When a result came back: a refusal logged at the run's end is dated by it, not by the end.
  const at = str(value.timestamp);
  if (at !== undefined) for (const e of events) if (e.kind === 'tool_result') e.at = at;
  return events;
}

function parseResult(value: Json): ResultEvent {
  const result: ResultEvent = {
    kind: 'result',
    subtype: str(value.subtype) ?? '',
    isError: value.is_error === true,
    result: str(value.result) ?? '',
    permissionDenials: Array.isArray(value.permission_denials) ? value.permission_denials : [],
  };
  const numTurns = num(value.num_turns);
  const costUsd = num(value.total_cost_usd);
  const terminalReason = str(value.terminal_reason);
  const apiErrorStatus = num(value.api_error_status);
  const sessionId = str(value.session_id);
  if (numTurns !== undefined) result.numTurns = numTurns;
  if (costUsd !== undefined) result.costUsd = costUsd;
  if (terminalReason !== undefined) result.terminalReason = terminalReason;
  if (apiErrorStatus !== undefined) result.apiErrorStatus = apiErrorStatus;
  if (sessionId !== undefined) result.sessionId = sessionId;
  if (isObject(value.usage)) result.usage = tokenUsage(value.usage, API_KEYS);
  const durationMs = num(value.duration_ms);
  const modelUsage = modelUsages(value.modelUsage);
  const sinceLast = modelUsages(value.model_usage_since_last_result);
  if (durationMs !== undefined) result.durationMs = durationMs;
  if (modelUsage !== undefined) result.modelUsage = modelUsage;
  if (sinceLast !== undefined) result.modelUsageSinceLast = sinceLast;
  return result;
}
