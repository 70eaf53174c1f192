import { StringDecoder } from 'node:string_decoder';

/** Token counts, named as the Messages API and the stream name them. */
export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
}

/** One model's share of a result (`modelUsage`, `model_usage_since_last_result`). */
export interface ModelUsage extends TokenUsage {
  readonly model: string;
  /** Claude Code's own figure, when it gave one. */
  readonly costUsd?: number;
}

/**
 * `claude -p --output-format stream-json --verbose` prints one JSON object per line. These are the
 * parts agentbox acts on; shapes measured on Claude Code 2.1.330 (test/fixtures/stream/*.jsonl).
 */
export type StreamEvent =
  | {
      kind: 'init';
      sessionId: string;
      tools: string[];
      slashCommands: string[];
      model?: string;
      cwd?: string;
      /** `claude_code_version`. */
      version?: string;
    }
  /**
   * The usage an assistant line carries. NOTE: one API message arrives as one line per content
   * block, each with the same id and the usage known when the message started: `output_tokens` is
   * a placeholder until the result line, so the text the line carries (`outputChars`) is kept too.
   */
  | {
      kind: 'usage';
      messageId: string;
      model: string;
      usage: TokenUsage;
      /** Of cache_creation_input_tokens, those written for an hour (priced higher). */
      cacheWrite1h: number;
      /** Characters of text, thinking and tool input in this line. */
      outputChars: number;
      /** The message is a subagent's (`parent_tool_use_id`), not a turn of the run's own agent. */
      subagent: boolean;
    }
  | { kind: 'tool_use'; id: string; name: string; input: unknown }
  | {
      kind: 'tool_result';
      toolUseId: string;
      isError: boolean;
      text: string;
      /**
       * The call was refused: by Claude Code's own rules ('config'), a hook ('hook'), as a
       * human-only command ('skill'), by the sandbox ('sandbox'), by agentbox's human gate ('gate').
       */
      refusedBy?: 'config' | 'hook' | 'skill' | 'sandbox' | 'gate' | 'other';
    }
  | { kind: 'text'; text: string }
  | { kind: 'hook'; phase: 'started' | 'response'; event: string; outcome?: string }
  /** Claude Code refused a tool call by its own permission rules (hooks never see these). */
  | { kind: 'permission_denied'; toolUseId: string; tool: string; message: string }
  | {
      kind: 'result';
      subtype: string;
      isError: boolean;
      result: string;
      numTurns?: number;
      costUsd?: number;
      terminalReason?: string;
      /** HTTP status of the failed model call when `terminalReason` is `api_error`. */
      apiErrorStatus?: number;
      permissionDenials: unknown[];
      sessionId?: string;
      usage?: TokenUsage;
      durationMs?: number;
      /** Per model, cumulative over the process (and a resumed session's saved totals). */
      modelUsage?: ModelUsage[];
      /** Per model, since the previous result of this process; each call is stated on one result only. */
      modelUsageSinceLast?: ModelUsage[];
    }
  /** Anything else; `type` is `type/subtype` when the line has a subtype (`system/permission_denied`). */
  | { kind: 'other'; type: string };

export type ResultEvent = Extract<StreamEvent, { kind: 'result' }>;
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** A tool_result's content is a string or a list of blocks; only text blocks carry words. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

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
    const usage = type === 'assistant' ? usageEvent(value) : [];
    const events = [...usage, ...contentEvents(type, value.message, value.tool_result_meta)];
    return events.length > 0 ? events : [other];
  }
  return [other];
}

/** Token counts from a `usage` object; a count that is missing or not a number is 0. */
function tokenUsage(value: unknown, keys: readonly [string, string, string, string]): TokenUsage {
  const o = isObject(value) ? value : {};
  const count = (key: string) => Math.max(0, num(o[key]) ?? 0);
  return {
    input_tokens: count(keys[0]),
    output_tokens: count(keys[1]),
    cache_read_input_tokens: count(keys[2]),
    cache_creation_input_tokens: count(keys[3]),
  };
}
const API_KEYS = [
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
] as const;
const MODEL_USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
] as const;

/** An assistant line's usage, with the size of what it says (see the 'usage' event). */
function usageEvent(value: Json): StreamEvent[] {
  const message = isObject(value.message) ? value.message : undefined;
  const id = str(message?.id);
  if (!message || !id || !isObject(message.usage)) return [];
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const chars = blocks.reduce((sum, b) => {
    const said =
      str(b.text) ?? str(b.thinking) ?? (b.type === 'tool_use' ? JSON.stringify(b.input ?? {}) : '');
    return sum + said.length;
  }, 0);
  const cacheCreation = isObject(message.usage.cache_creation) ? message.usage.cache_creation : {};
  return [
    {
      kind: 'usage',
      messageId: id,
      model: str(message.model) ?? '',
      usage: tokenUsage(message.usage, API_KEYS),
      cacheWrite1h: Math.max(0, num(cacheCreation.ephemeral_1h_input_tokens) ?? 0),
      outputChars: chars,
      subagent: typeof value.parent_tool_use_id === 'string',
    },
  ];
}

/** `modelUsage`-shaped maps: model name → counts and costUSD. undefined when absent or not a map. */
function modelUsages(value: unknown): ModelUsage[] | undefined {
  if (!isObject(value)) return undefined;
  return Object.entries(value).flatMap(([model, entry]): ModelUsage[] => {
    if (!isObject(entry)) return [];
    const costUsd = num(entry.costUSD);
    return [{ model, ...tokenUsage(entry, MODEL_USAGE_KEYS), ...(costUsd === undefined ? {} : { costUsd }) }];
  });
}

/** Assistant lines carry text and tool_use blocks, user lines tool_result blocks. */
/** Who refused each tool call, from a user line's `tool_result_meta` (measured on 2.1.330). */
function refusals(meta: unknown): Map<string, 'config' | 'hook' | 'other'> {
  const out = new Map<string, 'config' | 'hook' | 'other'>();
  if (!Array.isArray(meta)) return out;
  for (const entry of meta) {
    if (!isObject(entry) || !isObject(entry.permission_decision)) continue;
    if (entry.permission_decision.decision !== 'reject') continue;
    const source = entry.permission_decision.source;
    out.set(str(entry.id) ?? '', source === 'config' || source === 'hook' ? source : 'other');
  }
  return out;
}

const SKILL_REFUSAL = 'cannot be used with Skill tool due to disable-model-invocation';
/**
 * A failed command the sandbox stopped (measured on 2.1.330): a write outside the writable paths
 * (EROFS; node spells it in lower case), a forbidden operation (EPERM, e.g. a unix socket), a host not allowed (its proxy's
 * answer), and the note Claude Code appends about sandbox violations. Only for the log: the kernel
 * already refused.
 */
const SANDBOX_REFUSAL =
  /read-only file system|operation not permitted|\bEROFS\b|\bEPERM\b|connection blocked by network allowlist/i;
/**
 * agentbox's human gate refusing to run inside the run (src/run/gate.ts). It logs itself where it
 * can; from inside a sandbox it cannot, and the stream is the record.
 */
const GATE_REFUSAL = 'is the human gate and does not run inside';
/** Claude Code's own report of what its sandbox denied, also when the command exited 0. */
const SANDBOX_VIOLATIONS = '<sandbox_violations>';

function contentEvents(type: 'assistant' | 'user', message: unknown, meta?: unknown): StreamEvent[] {
  const refused = refusals(meta);
  const content = isObject(message) ? message.content : undefined;
  if (!Array.isArray(content)) return [];
  const events: StreamEvent[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (type === 'assistant' && block.type === 'text' && typeof block.text === 'string') {
      events.push({ kind: 'text', text: block.text });
    } else if (type === 'assistant' && block.type === 'tool_use') {
      events.push({
        kind: 'tool_use',
        id: str(block.id) ?? '',
        name: str(block.name) ?? '',
        input: block.input,
      });
    } else if (type === 'user' && block.type === 'tool_result') {
      const toolUseId = str(block.tool_use_id) ?? '';
      const text = contentText(block.content);
      const result: StreamEvent = { kind: 'tool_result', toolUseId, isError: block.is_error === true, text };
      const by =
        refused.get(toolUseId) ??
        (result.isError && text.includes(SKILL_REFUSAL)
          ? 'skill'
          : result.isError && text.includes(GATE_REFUSAL)
            ? 'gate'
            : text.includes(SANDBOX_VIOLATIONS) || (result.isError && SANDBOX_REFUSAL.test(text))
              ? 'sandbox'
              : undefined);
      if (by) result.refusedBy = by;
      events.push(result);
    }
  }
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

export interface Refusal {
  readonly toolUseId: string;
  readonly tool: string;
  readonly by: 'config' | 'hook' | 'skill' | 'sandbox' | 'gate' | 'other';
  readonly message: string;
  /** What the call asked for, cut to 200 characters (a command, a path). */
  readonly input?: string;
}

/** A tool call's input for the log: the command or path when there is one, else its JSON, cut. */
function excerpt(input: unknown): string {
  const o = isObject(input) ? input : {};
  const text =
    str(o.command) ?? str(o.file_path) ?? str(o.path) ?? str(o.skill) ?? JSON.stringify(input ?? null);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export interface StreamSummary {
  sessionId: string | null;
  toolCalls: number;
  /** The most recent tool call still waiting for its result. */
  currentTool: string | null;
  lastText: string | null;
  result: ResultEvent | null;
  toolErrors: number;
  /** Tool calls without a result yet, oldest first (the model may call several at once). */
  /** Tool calls waiting for their result, with an excerpt of their input (for refusals). */
  openTools: readonly { readonly id: string; readonly name: string; readonly input: string }[];
  /** Tool calls Claude Code refused (its rules, a hook, a human-only command), in order. */
  refusals: readonly Refusal[];
}

export const EMPTY_SUMMARY: StreamSummary = Object.freeze({
  sessionId: null,
  toolCalls: 0,
  currentTool: null,
  lastText: null,
  result: null,
  toolErrors: 0,
  openTools: Object.freeze([]),
  refusals: Object.freeze([]),
});

/** Folds one event into the summary; returns the same object when nothing changed. */
export function summarize(summary: StreamSummary, event: StreamEvent): StreamSummary {
  switch (event.kind) {
    case 'init':
      return { ...summary, sessionId: event.sessionId };
    case 'tool_use': {
      const openTools = [
        ...summary.openTools,
        { id: event.id, name: event.name, input: excerpt(event.input) },
      ];
      return { ...summary, toolCalls: summary.toolCalls + 1, openTools, currentTool: event.name };
    }
    case 'tool_result': {
      const openTools = summary.openTools.filter((t) => t.id !== event.toolUseId);
      const call = summary.openTools.find((t) => t.id === event.toolUseId);
      const tool = call?.name ?? '';
      const refusals = event.refusedBy
        ? [
            ...summary.refusals,
            {
              toolUseId: event.toolUseId,
              tool,
              by: event.refusedBy,
              message: event.text,
              ...(call?.input ? { input: call.input } : {}),
            },
          ]
        : summary.refusals;
      return {
        ...summary,
        refusals,
        openTools,
        currentTool: openTools.at(-1)?.name ?? null,
        toolErrors: summary.toolErrors + (event.isError ? 1 : 0),
      };
    }
    case 'text':
      return { ...summary, lastText: event.text };
    case 'result':
      return { ...summary, result: event, sessionId: summary.sessionId ?? event.sessionId ?? null };
    default:
      return summary;
  }
}

/**
 * Cuts a byte stream into whole lines. A multi-byte character split across two chunks is
 * decoded whole; `\r\n` ends a line like `\n`; blank lines are skipped.
 * NOTE: feed it Buffers (a child's stdout without setEncoding); a string chunk is taken as
 * already decoded and must not follow a Buffer that ended mid-character.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  push(chunk: Buffer | string): string[] {
    const text = this.rest + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    return clean(parts);
  }

  /** The last line when the stream ended without a newline. */
  flush(): string[] {
    const text = this.rest + this.decoder.end();
    this.rest = '';
    return clean([text]);
  }
}

function clean(lines: string[]): string[] {
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)).filter((l) => l.trim() !== '');
}
