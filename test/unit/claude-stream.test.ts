import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_SUMMARY,
  LineSplitter,
  parseStreamLine,
  type StreamEvent,
  type StreamSummary,
  summarize,
} from '../../src/claude/stream.js';

// Real output of Claude Code 2.1.330 (regenerate: npx tsx test/fixtures/stream/record.ts).
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/stream');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, `${name}.jsonl`), 'utf8');
const linesOf = (text: string) => text.split('\n').filter((l) => l !== '');
const eventsOf = (name: string) => linesOf(fixture(name)).flatMap(parseStreamLine);
const fold = (events: StreamEvent[]) => events.reduce(summarize, EMPTY_SUMMARY);
const kinds = (events: StreamEvent[]) => events.map((e) => (e.kind === 'other' ? `other:${e.type}` : e.kind));
const TOKENS_10_1 = {
  input_tokens: 10,
  output_tokens: 1,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};
const usageOf = (messageId: string, outputChars: number): StreamEvent => ({
  kind: 'usage',
  messageId,
  model: 'claude-opus-5-5',
  usage: TOKENS_10_1,
  cacheWrite1h: 0,
  outputChars,
  subagent: false,
});
const model20 = {
  model: 'claude-opus-5-5',
  input_tokens: 20,
  output_tokens: 20,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  costUsd: 0.00048,
};

describe('parseStreamLine on real output', () => {
  it('success: hooks, init, text and tool call split over two lines, tool result, result', () => {
    const events = eventsOf('success');
    expect(kinds(events)).toEqual([
      'hook',
      'hook',
      'init',
      'usage',
      'text',
      'usage',
      'tool_use',
      'hook',
      'hook',
      'tool_result',
      'usage',
      'text',
      'hook',
      'hook',
      'result',
    ]);
    const hooks = events.filter((e) => e.kind === 'hook');
    expect(hooks).toEqual([
      { kind: 'hook', phase: 'started', event: 'SessionStart' },
      { kind: 'hook', phase: 'response', event: 'SessionStart', outcome: 'success' },
      { kind: 'hook', phase: 'started', event: 'PreToolUse' },
      { kind: 'hook', phase: 'response', event: 'PreToolUse', outcome: 'error' },
      { kind: 'hook', phase: 'started', event: 'Stop' },
      { kind: 'hook', phase: 'response', event: 'Stop', outcome: 'success' },
    ]);

    const init = events.find((e) => e.kind === 'init');
    expect(init).toMatchObject({
      kind: 'init',
      model: 'claude-opus-5-5',
      cwd: expect.stringMatching(/^\//),
      version: '2.1.330',
    });
    if (init?.kind !== 'init') throw new Error('no init');
    expect(init.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(init.tools).toEqual(expect.arrayContaining(['Bash', 'Read']));
    expect(init.tools).not.toContain('Write');
    expect(init.slashCommands.length).toBeGreaterThan(0);

    const toolUse = events.find((e) => e.kind === 'tool_use');
    expect(toolUse).toEqual({
      kind: 'tool_use',
      id: expect.stringMatching(/^toolu_/),
      name: 'Bash',
      input: { command: 'echo hello', description: 'say hello' },
    });
    const toolResult = events.find((e) => e.kind === 'tool_result');
    expect(toolResult).toEqual({
      kind: 'tool_result',
      toolUseId: (toolUse as { id: string }).id,
      isError: false,
      text: 'hello',
      at: '2026-11-21T14:49:58.200Z',
    });
    expect(events.filter((e) => e.kind === 'text').map((e) => (e as { text: string }).text)).toEqual([
      'Let me look.',
      'All done: hello.',
    ]);
    expect(events.at(-1)).toEqual({
      kind: 'result',
      subtype: 'success',
      isError: false,
      result: 'All done: hello.',
      numTurns: 2,
      costUsd: expect.any(Number),
      terminalReason: 'completed',
      permissionDenials: [],
      sessionId: init.sessionId,
      usage: {
        input_tokens: 20,
        output_tokens: 20,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
      durationMs: 257,
      modelUsage: [model20],
      modelUsageSinceLast: [model20],
    });
    // The message split over two lines repeats its usage (the placeholder output count of message_start).
    expect(events.filter((e) => e.kind === 'usage')).toEqual([
      usageOf('msg_56a85e9f134909857220132d', 12),
      usageOf(
        'msg_56a85e9f134909857220132d',
        JSON.stringify({ command: 'echo hello', description: 'say hello' }).length,
      ),
      usageOf('msg_18f4afad4f5c70604f50a540', 16),
    ]);

    expect(fold(events)).toEqual({
      sessionId: init.sessionId,
      toolCalls: 1,
      currentTool: null,
      lastText: 'All done: hello.',
      result: events.at(-1),
      toolErrors: 0,
      openTools: [],
      refusals: [],
    });
  });

  it('api error: a synthetic assistant text, then an error result that still says "success"', () => {
    const events = eventsOf('api-error');
    expect(kinds(events)).toEqual(['init', 'usage', 'text', 'result']);
    const result = events.at(-1);
    expect(result).toMatchObject({
      kind: 'result',
      subtype: 'success',
      isError: true,
      terminalReason: 'api_error',
      apiErrorStatus: 500,
      numTurns: 1,
      permissionDenials: [],
    });
    expect((result as { result: string }).result).toMatch(/^API Error: 500 /);
    const summary = fold(events);
    expect(summary.result?.isError).toBe(true);
    expect(summary.toolCalls).toBe(0);
    expect(summary.lastText).toMatch(/^API Error: 500/);
  });

  it('denied tool: permission_denied line, error results, denials in the result', () => {
    const events = eventsOf('denied-tool');
    expect(kinds(events)).toEqual([
      'init',
      'usage',
      'tool_use',
      'permission_denied',
      'tool_result',
      'usage',
      'tool_use',
      'tool_result',
      'usage',
      'tool_use',
      'tool_result',
      'usage',
      'text',
      'result',
    ]);
    const results = events.filter((e) => e.kind === 'tool_result') as Extract<
      StreamEvent,
      { kind: 'tool_result' }
    >[];
    expect(results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(results[0]!.text).toContain('needs approval');
    expect(results[1]!.text).toBe('Exit code 3');
    expect(results[2]!.text).toContain('No such tool available: Write');
    const result = events.at(-1) as Extract<StreamEvent, { kind: 'result' }>;
    expect(result).toMatchObject({
      isError: false,
      result: 'Gave up.',
      terminalReason: 'completed',
      numTurns: 4,
    });
    expect(result.permissionDenials).toEqual([
      {
        tool_name: 'Bash',
        tool_use_id: results[0]!.toolUseId,
        tool_input: { command: 'touch not-allowed.txt', description: 'scripted command' },
      },
    ]);
    expect(result.apiErrorStatus).toBeUndefined();
    const summary = fold(events);
    expect(summary).toMatchObject({ toolCalls: 3, toolErrors: 3, currentTool: null, lastText: 'Gave up.' });
    // The refused call is recorded once, with who refused it (the tool result's meta says "config").
    expect(summary.refusals).toEqual([
      {
        toolUseId: results[0]!.toolUseId,
        tool: 'Bash',
        by: 'config',
        message: results[0]!.text,
        // What the call asked for, so the log says what was refused, not only why.
        input: 'touch not-allowed.txt',
        // When (the result line's own time): a run's end logs it, dated then.
        at: '2026-11-21T14:49:59.946Z',
      },
    ]);
  });
});

describe('parseStreamLine on odd lines', () => {
  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['not JSON', 'Error: something went wrong'],
    ['truncated JSON', '{"type":"assistant","message":{"content":[{"type":"te'],
    ['JSON null', 'null'],
    ['a JSON string', '"result"'],
    ['a JSON array', '[{"type":"result"}]'],
    ['an object without type', '{"subtype":"init","session_id":"x"}'],
    ['a non-string type', '{"type":42}'],
  ])('%s → []', (_label, line) => {
    expect(parseStreamLine(line)).toEqual([]);
  });

  it('returns every block of one line, in order', () => {
    const line = JSON.stringify({
      type: 'assistant',
      message: {
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'two calls' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/x' } },
          { type: 'tool_use', id: 'toolu_2', name: 'Grep', input: { pattern: 'y' } },
        ],
      },
    });
    expect(parseStreamLine(line)).toEqual([
      { kind: 'text', text: 'two calls' },
      { kind: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/x' } },
      { kind: 'tool_use', id: 'toolu_2', name: 'Grep', input: { pattern: 'y' } },
    ]);
  });

  it('reads tool results whose content is a list of blocks', () => {
    const line = JSON.stringify({
      type: 'user',
      message: {
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'a' },
              { type: 'image', source: {} },
              { type: 'text', text: 'b' },
            ],
          },
          { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: 'boom' },
        ],
      },
    });
    expect(parseStreamLine(line)).toEqual([
      { kind: 'tool_result', toolUseId: 'toolu_1', isError: false, text: 'a\nb' },
      { kind: 'tool_result', toolUseId: 'toolu_2', isError: true, text: 'boom' },
    ]);
  });

  it.each([
    ['bash', '/bin/bash: line 1: /repo/x: Read-only file system', true],
    ['node (lower case, with the code)', "Error: EROFS: read-only file system, open '/repo/x'", true],
    ['python', "OSError: [Errno 30] Read-only file system: '/repo/x'", true],
    ['a socket', 'socat: connect: Operation not permitted', true],
    ['node EPERM', 'Error: EPERM: operation not permitted, unlink', true],
    ['the proxy', 'Connection blocked by network allowlist', true],
    ['an ordinary failure', 'Error: ENOENT: no such file or directory', false],
    ['a word that merely contains the code', 'see XEPERMY for details', false],
    [
      'a file that mentions the words, then an unrelated failure',
      'Exit code 1\nRead-only file system\nOperation not permitted\ncat: missing: No such file or directory',
      false,
    ],
    [
      'a transcript quoting a violations note, then an unrelated failure',
      'Exit code 1\n{"content":"x\\n<sandbox_violations>\\ndeny y\\n</sandbox_violations>"}\ncat: missing: No such file or directory',
      false,
    ],
  ])('a failed command that names the sandbox: %s → %s', (_label, text, sandbox) => {
    const line = JSON.stringify({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 't', is_error: true, content: text }] },
    });
    const [event] = parseStreamLine(line);
    expect(event && 'refusedBy' in event ? event.refusedBy : undefined).toBe(sandbox ? 'sandbox' : undefined);
  });

  it.each([
    [
      "Claude Code's violations note at the end (curl exits 0 on the proxy's answer)",
      'Connection blocked by network allowlist\ncurl-exit-0\n<sandbox_violations>\ndeny network-outbound example.com:80 (user denied)\n</sandbox_violations>',
      true,
    ],
    [
      'a file that mentions the words and the tag, printed by a command that succeeded',
      'notes: Read-only file system\nOperation not permitted\n<sandbox_violations>\ndeny x\n</sandbox_violations>\nmore notes',
      false,
    ],
    [
      'a transcript line quoting the tag',
      '{"content":"<sandbox_violations>\\ndeny y\\n</sandbox_violations>"}',
      false,
    ],
  ])('a command that succeeded: %s → %s', (_label, text, sandbox) => {
    const line = JSON.stringify({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 't', is_error: false, content: text }] },
    });
    const [event] = parseStreamLine(line);
    expect(event && 'refusedBy' in event ? event.refusedBy : undefined).toBe(sandbox ? 'sandbox' : undefined);
  });

  it.each([
    [
      'a user line with only text (a command body)',
      { type: 'user', message: { content: [{ type: 'text', text: 'x' }] } },
      'user',
    ],
    ['an assistant line with no content', { type: 'assistant', message: {} }, 'assistant'],
    ['an init without a session id', { type: 'system', subtype: 'init' }, 'system/init'],
    ['a retry notice', { type: 'system', subtype: 'api_retry', attempt: 1 }, 'system/api_retry'],
    ['a partial message', { type: 'stream_event', event: {} }, 'stream_event'],
  ])('%s → other', (_label, value, type) => {
    expect(parseStreamLine(JSON.stringify(value))).toEqual([{ kind: 'other', type }]);
  });

  it('reads a result that lacks the optional fields (unknown --resume id)', () => {
    const line = JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true });
    expect(parseStreamLine(line)).toEqual([
      { kind: 'result', subtype: 'error_during_execution', isError: true, result: '', permissionDenials: [] },
    ]);
  });

  it('ignores fields of the wrong type instead of trusting them', () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: 'yes',
      result: 42,
      num_turns: '3',
      total_cost_usd: null,
      permission_denials: 'none',
      session_id: 7,
    });
    expect(parseStreamLine(line)).toEqual([
      { kind: 'result', subtype: 'success', isError: false, result: '', permissionDenials: [] },
    ]);
    const init = JSON.stringify({
      type: 'system',
      subtype: 'init',
      session_id: 's',
      tools: ['A', 3],
      model: 1,
    });
    expect(parseStreamLine(init)).toEqual([
      { kind: 'init', sessionId: 's', tools: ['A'], slashCommands: [] },
    ]);
  });
});

describe('usage in the stream', () => {
  const assistant = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type: 'assistant', message, ...extra });
  const NONE = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };

  it.each([
    [
      'counts of every kind, the 1-hour cache writes, text, thinking and tool input measured',
      assistant({
        id: 'm1',
        model: 'claude-sonnet-4-5',
        usage: {
          input_tokens: 3,
          output_tokens: 2,
          cache_read_input_tokens: 400,
          cache_creation_input_tokens: 50,
          cache_creation: { ephemeral_1h_input_tokens: 20, ephemeral_5m_input_tokens: 30 },
        },
        content: [
          { type: 'thinking', thinking: 'abcd' },
          { type: 'text', text: 'hi' },
          { type: 'tool_use', id: 't', name: 'Read', input: { a: 1 } },
        ],
      }),
      {
        messageId: 'm1',
        model: 'claude-sonnet-4-5',
        usage: {
          input_tokens: 3,
          output_tokens: 2,
          cache_read_input_tokens: 400,
          cache_creation_input_tokens: 50,
        },
        cacheWrite1h: 20,
        outputChars: 4 + 2 + 7,
        subagent: false,
      },
    ],
    [
      'a subagent line; counts of the wrong type read as 0',
      assistant(
        {
          id: 'm2',
          usage: { input_tokens: '9', output_tokens: -4, cache_read_input_tokens: null },
          content: [],
        },
        { parent_tool_use_id: 'toolu_9' },
      ),
      { messageId: 'm2', model: '', usage: NONE, cacheWrite1h: 0, outputChars: 0, subagent: true },
    ],
  ])('%s', (_label, line, expected) => {
    expect(parseStreamLine(line)[0]).toEqual({ kind: 'usage', ...expected });
  });

  it.each([
    ['no usage', assistant({ id: 'm', content: [{ type: 'text', text: 'x' }] })],
    ['no message id', assistant({ usage: { input_tokens: 1 }, content: [{ type: 'text', text: 'x' }] })],
    [
      'a usage that is not an object',
      assistant({ id: 'm', usage: 5, content: [{ type: 'text', text: 'x' }] }),
    ],
  ])('an assistant line with %s has no usage event', (_label, line) => {
    expect(parseStreamLine(line).map((e) => e.kind)).toEqual(['text']);
  });

  it('reads per-model usage of a result and skips entries that are not objects', () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'success',
      duration_ms: 12,
      usage: { input_tokens: 5, output_tokens: 'many' },
      modelUsage: { a: { inputTokens: 5, outputTokens: 6, costUSD: 0.5 }, b: 'junk' },
      model_usage_since_last_result: { a: { inputTokens: 1, costUSD: 'free' } },
    });
    expect(parseStreamLine(line)[0]).toMatchObject({
      durationMs: 12,
      usage: { ...NONE, input_tokens: 5 },
      modelUsage: [{ model: 'a', ...NONE, input_tokens: 5, output_tokens: 6, costUsd: 0.5 }],
      modelUsageSinceLast: [{ model: 'a', ...NONE, input_tokens: 1 }],
    });
  });
});

describe('summarize', () => {
  const use = (id: string, name: string): StreamEvent => ({ kind: 'tool_use', id, name, input: {} });
  const done = (id: string, isError = false): StreamEvent => ({
    kind: 'tool_result',
    toolUseId: id,
    isError,
    text: '',
  });

  it('tracks parallel tool calls: the current tool is the latest one still open', () => {
    const steps: [StreamEvent, string | null, number][] = [
      [use('1', 'Read'), 'Read', 1],
      [use('2', 'Grep'), 'Grep', 2],
      [done('2'), 'Read', 1],
      [done('1', true), null, 0],
      [done('unknown'), null, 0],
    ];
    let summary: StreamSummary = EMPTY_SUMMARY;
    for (const [event, current, open] of steps) {
      summary = summarize(summary, event);
      expect(summary.currentTool).toBe(current);
      expect(summary.openTools).toHaveLength(open);
    }
    expect(summary.toolCalls).toBe(2);
    expect(summary.toolErrors).toBe(1);
  });

  it.each([
    [
      "npm's update check: the note, not the output's first line",
      '> kebab@1.0.0 test\n> node --test\n\n✔ passes\n<sandbox_violations>\ndeny network-outbound registry.npmjs.org:443 (user denied)\n</sandbox_violations>',
      false,
      'deny network-outbound registry.npmjs.org:443 (user denied)',
    ],
    [
      'two denials in one note',
      'x\n<sandbox_violations>\ndeny a\ndeny b\n</sandbox_violations>',
      false,
      'deny a; deny b',
    ],
    [
      'a failed write: the line naming the error',
      "Exit code 1\nwriting the cache…\ntouch: cannot touch '/home/me/x': Read-only file system",
      true,
      "touch: cannot touch '/home/me/x': Read-only file system",
    ],
  ])('a sandbox refusal says what was refused: %s', (_label, text, isError, message) => {
    const events = [
      use('1', 'Bash'),
      ...parseStreamLine(
        JSON.stringify({
          type: 'user',
          message: { content: [{ type: 'tool_result', tool_use_id: '1', is_error: isError, content: text }] },
        }),
      ),
    ];
    expect(fold(events).refusals).toEqual([
      { toolUseId: '1', tool: 'Bash', by: 'sandbox', message, input: '{}' },
    ]);
  });

  it("a refusal keeps its result line's time (a run's end logs it, dated when it happened)", () => {
    const line = (timestamp?: string) =>
      JSON.stringify({
        type: 'user',
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: '1',
              is_error: true,
              content: "touch: cannot touch 'x': Read-only file system",
            },
          ],
        },
        ...(timestamp ? { timestamp } : {}),
      });
    const stamped = fold([use('1', 'Bash'), ...parseStreamLine(line('2026-01-01T09:01:12.000Z'))]);
    expect(stamped.refusals.map((r) => r.at)).toEqual(['2026-01-01T09:01:12.000Z']);
    const unstamped = fold([use('1', 'Bash'), ...parseStreamLine(line())]);
    expect(unstamped.refusals.map((r) => 'at' in r)).toEqual([false]);
  });

  it('takes the session id from the result when there was no init', () => {
    const result: StreamEvent = {
      kind: 'result',
      subtype: 'error_during_execution',
      isError: true,
      result: '',
      permissionDenials: [],
      sessionId: 'abc',
    };
    expect(summarize(EMPTY_SUMMARY, result).sessionId).toBe('abc');
    const afterInit = summarize(EMPTY_SUMMARY, {
      kind: 'init',
      sessionId: 'first',
      tools: [],
      slashCommands: [],
    });
    expect(summarize(afterInit, result).sessionId).toBe('first');
  });

  it('leaves the summary alone for hooks and other lines, and never mutates its input', () => {
    const before = JSON.stringify(EMPTY_SUMMARY);
    expect(summarize(EMPTY_SUMMARY, { kind: 'hook', phase: 'started', event: 'Stop' })).toBe(EMPTY_SUMMARY);
    expect(summarize(EMPTY_SUMMARY, { kind: 'other', type: 'system/compact_boundary' })).toBe(EMPTY_SUMMARY);
    summarize(EMPTY_SUMMARY, use('1', 'Bash'));
    expect(JSON.stringify(EMPTY_SUMMARY)).toBe(before);
    expect(Object.isFrozen(EMPTY_SUMMARY)).toBe(true);
  });
});

describe('LineSplitter', () => {
  it('gives the same lines whatever the chunk size, multi-byte characters included', () => {
    const text = `${fixture('success')}{"type":"x","t":"ünï 🚀 中文"}\r\n\n{"type":"last"}`;
    const bytes = Buffer.from(text, 'utf8');
    const expected = text
      .split('\n')
      .map((l) => l.replace(/\r$/, ''))
      .filter((l) => l.trim() !== '');
    for (const size of [1, 2, 3, 5, 7, 64, 4096, bytes.length]) {
      const splitter = new LineSplitter();
      const lines: string[] = [];
      for (let i = 0; i < bytes.length; i += size) lines.push(...splitter.push(bytes.subarray(i, i + size)));
      lines.push(...splitter.flush());
      expect(lines, `chunk size ${size}`).toEqual(expected);
    }
  });

  it('holds a partial line until its newline, and flushes it at the end', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('{"a":')).toEqual([]);
    expect(splitter.push('1}\n{"b"')).toEqual(['{"a":1}']);
    expect(splitter.push(':2}')).toEqual([]);
    expect(splitter.flush()).toEqual(['{"b":2}']);
    expect(splitter.flush()).toEqual([]);
  });

  it('splits a multi-byte character across pushes without mangling it', () => {
    const bytes = Buffer.from('🚀\n', 'utf8');
    const splitter = new LineSplitter();
    expect(splitter.push(bytes.subarray(0, 1))).toEqual([]);
    expect(splitter.push(bytes.subarray(1, 3))).toEqual([]);
    expect(splitter.push(bytes.subarray(3))).toEqual(['🚀']);
  });

  it('skips blank lines', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('\n\r\n  \na\n\n')).toEqual(['a']);
  });
});
