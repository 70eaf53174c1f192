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
      /** The line's own time (`timestamp`, ISO 8601), when Claude Code wrote one. */
      at?: string;
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
