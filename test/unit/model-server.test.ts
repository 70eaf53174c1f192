import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bash,
  hang,
  helpers,
  type ModelServer,
  type Rule,
  scriptByTurn,
  startModelServer,
  text,
  tool,
} from '../fixtures/model-server/index.js';

type Json = any;

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(rules: Rule[], options?: Parameters<typeof startModelServer>[1]): Promise<ModelServer> {
  server = await startModelServer(rules, options);
  return server;
}

/** A request body shaped like Claude Code's; `assistantTurns` earlier exchanges come first. */
function messagesBody(
  opts: { prompt?: Json; assistantTurns?: number; system?: Json; tools?: string[] } = {},
) {
  const messages: Json[] = [];
  for (let i = 0; i < (opts.assistantTurns ?? 0); i++) {
    messages.push({ role: 'user', content: `question ${i}` }, { role: 'assistant', content: `answer ${i}` });
  }
  messages.push({ role: 'user', content: opts.prompt ?? 'go' });
  return {
    model: 'claude-test',
    stream: true,
    max_tokens: 1000,
    system: opts.system ?? [{ type: 'text', text: 'You are a test.' }],
    tools: (opts.tools ?? ['Bash']).map((name) => ({ name, input_schema: {} })),
    messages,
  };
}

/** The streamed message rebuilt from our own SSE output, checking each event's name against its data. */
function assemble(sse: string) {
  const events = sse
    .split('\n\n')
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const [eventLine, dataLine] = chunk.split('\n');
      const data = JSON.parse(dataLine!.replace(/^data: /, ''));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
  const start = events[0];
  expect(start.type).toBe('message_start');
  expect(events.at(-1).type).toBe('message_stop');
  const content: Json[] = [];
  for (const e of events) {
    if (e.type === 'content_block_start') content[e.index] = { ...e.content_block };
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta')
      content[e.index].text += e.delta.text;
    if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') {
      content[e.index].input = JSON.parse(e.delta.partial_json);
    }
  }
  const stopReason = events.find((e) => e.type === 'message_delta').delta.stop_reason;
  return { id: start.message.id as string, model: start.message.model as string, content, stopReason };
}

async function post(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const res = await fetch(`${server!.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

const ask = async (body: unknown, headers?: Record<string, string>) =>
  assemble((await post(body, headers)).text);

describe('rules', () => {
  it('picks the reply by turn, so each turn of a conversation gets its own answer', async () => {
    const s = await start(scriptByTurn([text('first'), text('second')]));
    expect((await ask(messagesBody())).content).toEqual([{ type: 'text', text: 'first' }]);
    expect((await ask(messagesBody({ assistantTurns: 1 }))).content[0].text).toBe('second');
    expect((await ask(messagesBody({ assistantTurns: 2 }))).content[0].text).toBe('(no scripted reply)');
    expect(s.requests.map((r) => [r.view.index, r.view.turn, r.rule])).toEqual([
      [0, 0, 'turn 0'],
      [1, 1, 'turn 1'],
      [2, 2, undefined],
    ]);
  });

  it.each([
    ['lastUserText substring', { lastUserText: 'deploy' }, 'please deploy now', 'please wait'],
    ['lastUserText regex', { lastUserText: /^run #\d+$/ }, 'run #42', 'run #x'],
    ['anyText regex', { anyText: /answer 0/ }, 'x', null],
    ['system substring', { system: 'supervisor' }, 'x', null],
    ['toolOffered', { toolOffered: 'Bash' }, 'x', null],
    ['predicate', { predicate: (r: { lastUserText: string }) => r.lastUserText.length === 3 }, 'abc', 'abcd'],
  ] as const)('matches by %s', async (_label, when, hit, miss) => {
    await start([{ name: 'picked', when, reply: text('matched') }]);
    const hitBody =
      miss === null
        ? messagesBody({ prompt: hit, assistantTurns: 1, system: 'I am the supervisor', tools: ['Bash'] })
        : messagesBody({ prompt: hit });
    const missBody =
      miss === null
        ? messagesBody({ prompt: 'x', system: 'plain', tools: ['Read'] })
        : messagesBody({ prompt: miss });
    expect((await ask(hitBody)).content[0].text).toBe('matched');
    expect((await ask(missBody)).content[0].text).toBe('(no scripted reply)');
    expect(server!.requests.map((r) => r.rule)).toEqual(['picked', undefined]);
  });

  it('needs every `when` field to match, and the first matching rule wins', async () => {
    await start([
      { name: 'both', when: { turn: 0, lastUserText: 'alpha' }, reply: text('both') },
      { name: 'turn-only', when: { turn: 0 }, reply: text('turn-only') },
      { reply: text('catch-all') },
    ]);
    expect((await ask(messagesBody({ prompt: 'alpha' }))).content[0].text).toBe('both');
    expect((await ask(messagesBody({ prompt: 'beta' }))).content[0].text).toBe('turn-only');
    expect((await ask(messagesBody({ prompt: 'alpha', assistantTurns: 1 }))).content[0].text).toBe(
      'catch-all',
    );
    expect(server!.requests.map((r) => r.rule)).toEqual(['both', 'turn-only', '#2']);
  });

  it('uses a rule at most `times` times, then falls through', async () => {
    await start([{ name: 'once', reply: text('once'), times: 1 }], { fallback: text('later') });
    expect((await ask(messagesBody())).content[0].text).toBe('once');
    expect((await ask(messagesBody())).content[0].text).toBe('later');
    server!.setRules([{ name: 'again', reply: text('again'), times: 1 }]);
    expect((await ask(messagesBody())).content[0].text).toBe('again');
    expect(server!.requests.map((r) => r.rule)).toEqual(['once', undefined, 'again']);
  });

  it('passes the request view to a reply function', async () => {
    await start([{ reply: (req) => text(`you said ${req.lastUserText} at turn ${req.turn}`) }]);
    expect((await ask(messagesBody({ prompt: 'hi', assistantTurns: 2 }))).content[0].text).toBe(
      'you said hi at turn 2',
    );
  });

  it('answers HTTP 500 naming the error when a rule throws', async () => {
    await start([
      {
        name: 'broken',
        reply: () => {
          throw new Error('script bug');
        },
      },
    ]);
    const res = await post(messagesBody());
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text).error.message).toContain('script bug');
    expect(server!.requests[0]!.rule).toBe('error');
  });
});

describe('replies', () => {
  it('streams a unique message id per response, even for identical requests', async () => {
    await start([{ reply: text('same') }]);
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await ask(messagesBody())).id);
    expect(ids.size).toBe(5);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(server!.requests.map((r) => r.messageId)).toEqual([...ids]);
  });

  it('sends text before tool_use blocks, with unique tool ids and stop_reason tool_use', async () => {
    await start([
      {
        reply: {
          text: 'looking',
          tools: [
            { name: 'Bash', input: { command: 'ls' } },
            { name: 'Bash', input: { command: 'pwd' } },
            { name: 'Read', input: { file_path: '/x' }, id: 'toolu_fixed' },
          ],
        },
      },
    ]);
    const message = await ask(messagesBody());
    expect(message.stopReason).toBe('tool_use');
    expect(message.content.map((b: Json) => b.type)).toEqual(['text', 'tool_use', 'tool_use', 'tool_use']);
    expect(message.content[1]).toMatchObject({ name: 'Bash', input: { command: 'ls' } });
    expect(message.content[3]).toEqual({
      type: 'tool_use',
      id: 'toolu_fixed',
      name: 'Read',
      input: { file_path: '/x' },
    });
    const ids = message.content.slice(1).map((b: Json) => b.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toMatch(/^toolu_/);
    // The recorded reply carries the ids actually sent, so a test can look up the matching result.
    expect(server!.requests[0]!.reply.blocks!.slice(1).map((b: Json) => b.id)).toEqual(ids);
  });

  it('takes explicit blocks in their given order and an explicit stop reason', async () => {
    const blocks = [
      { type: 'tool_use' as const, name: 'Bash', input: { command: 'true' } },
      { type: 'text' as const, text: 'after the tool' },
    ];
    await start([{ reply: { blocks, text: 'ignored', stopReason: 'max_tokens' } }]);
    const message = await ask(messagesBody());
    expect(message.stopReason).toBe('max_tokens');
    expect(message.content).toMatchObject(blocks);
    expect(message.content).toHaveLength(2);
  });

  it('builds replies with text() and tool()', () => {
    expect(text('hi')).toEqual({ text: 'hi' });
    expect(tool('Read', { file_path: '/f' }, 'toolu_x')).toEqual({
      tools: [{ name: 'Read', input: { file_path: '/f' }, id: 'toolu_x' }],
    });
  });

  it('answers with an HTTP error and an Anthropic-style error body', async () => {
    await start([{ reply: { httpStatus: 529 } }]);
    const res = await post(messagesBody());
    expect(res.status).toBe(529);
    expect(res.contentType).toBe('application/json');
    expect(JSON.parse(res.text)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(server!.requests[0]!.messageId).toBeUndefined();
  });

  it('waits delayMs before answering', async () => {
    await start([{ reply: { text: 'late', delayMs: 300 } }]);
    const started = Date.now();
    expect((await ask(messagesBody())).content[0].text).toBe('late');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('ends a hanging request when closed', async () => {
    const s = await start([{ reply: hang() }]);
    const pending = post(messagesBody());
    await expect.poll(() => s.requests.length).toBe(1);
    const started = Date.now();
    await s.close();
    await expect(pending).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1000);
    await s.close(); // a second close is harmless
  });

  it('survives a client that leaves while its answer is pending', async () => {
    await start([{ when: { lastUserText: 'slow' }, reply: hang() }, { reply: bash('echo ok') }]);
    const abort = new AbortController();
    const leaving = post(messagesBody({ prompt: 'slow' }), {}, abort.signal);
    await expect.poll(() => server!.requests.length).toBe(1);
    abort.abort();
    await expect(leaving).rejects.toThrow();
    expect((await ask(messagesBody())).content[0].input).toEqual({
      command: 'echo ok',
      description: 'scripted command',
    });
  });

  it('refuses a body that is not JSON with 400', async () => {
    await start([]);
    expect((await post('{not json')).status).toBe(400);
  });
});

describe('other endpoints', () => {
  it('answers HEAD /api/hello and count_tokens without recording them as messages', async () => {
    const s = await start([]);
    const hello = await fetch(`${s.url}/api/hello`, { method: 'HEAD' });
    expect(hello.status).toBe(200);
    const count = await fetch(`${s.url}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      body: JSON.stringify(messagesBody()),
    });
    expect(await count.json()).toEqual({ input_tokens: 10 });
    expect((await fetch(`${s.url}/v2/unknown`)).status).toBe(404);
    expect(s.requests).toEqual([]);
    expect(s.otherRequests).toEqual([
      { method: 'HEAD', path: '/api/hello' },
      { method: 'POST', path: '/v1/messages/count_tokens' },
      { method: 'GET', path: '/v2/unknown' },
    ]);
  });

  it("keeps an idle kept-alive connection open past node's 5 s default, as an API gateway does", async () => {
    const s = await start([{ reply: text('hi') }]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = http.request(`${s.url}/v1/messages`, { method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(messagesBody()));
      });
    try {
      expect(await post()).toEqual({ status: 200, reused: false });
      // Past node's default keepAliveTimeout (5 s, and the grace node adds to it): a server with the
      // default has closed the socket by then (measured: open at 5.6 s, closed at 6.5 s).
      await new Promise((r) => setTimeout(r, 7_500));
      expect(await post()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('listens on 127.0.0.1 and a fresh port each time', async () => {
    const a = await start([]);
    const b = await startModelServer([]);
    try {
      expect(a.url).toBe(`http://127.0.0.1:${a.port}`);
      expect(b.port).not.toBe(a.port);
    } finally {
      await b.close();
    }
  });
});

describe('request view', () => {
  const conversation = {
    model: 'claude-opus-test',
    system: [
      { type: 'text', text: 'You are Claude Code.' },
      { type: 'text', text: 'Be brief.' },
    ],
    tools: [{ name: 'Bash' }, { name: 'Read' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'list files' }] },
      {
        role: 'system',
        content: 'Environment:\n - Primary working directory: /tmp/some repo\n - Platform: linux',
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'sure' },
          { type: 'tool_use', id: 'toolu_a', name: 'Bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'false' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'README.md' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_b',
            content: [{ type: 'text', text: 'exit 1' }],
            is_error: true,
          },
          { type: 'text', text: 'keep going' },
        ],
      },
    ],
  };

  it('extracts what rules match on', async () => {
    const s = await start([]);
    await ask(conversation, { 'x-claude-code-session-id': '11111111-2222-3333-4444-555555555555' });
    const view = s.requests[0]!.view;
    expect(view).toMatchObject({
      index: 0,
      turn: 1,
      lastUserText: 'README.md\nexit 1\nkeep going',
      system: 'You are Claude Code.\nBe brief.',
      tools: ['Bash', 'Read'],
      model: 'claude-opus-test',
      sessionId: '11111111-2222-3333-4444-555555555555',
      workingDirectory: '/tmp/some repo',
      toolResults: [
        { toolUseId: 'toolu_a', content: 'README.md', isError: false },
        { toolUseId: 'toolu_b', content: 'exit 1', isError: true },
      ],
    });
    expect(view.allText.split('\n')).toEqual(
      expect.arrayContaining(['list files', 'sure', 'README.md', 'exit 1', 'keep going']),
    );
    expect(view.body).toEqual(conversation);
  });

  it.each([
    ['Primary working directory: /a/b', '/a/b'],
    ['Working directory: /c/d', '/c/d'],
    ['no directory here', undefined],
  ])('reads the working directory from %j', async (env, expected) => {
    const s = await start([]);
    await ask({
      ...conversation,
      system: [{ type: 'text', text: env }],
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(s.requests[0]!.view.workingDirectory).toBe(expected);
    expect(s.requests[0]!.view.sessionId).toBeUndefined();
  });

  it('finds tool results and tool uses anywhere in the conversation', async () => {
    const s = await start([]);
    await ask({
      ...conversation,
      messages: [
        ...conversation.messages,
        { role: 'assistant', content: 'done' },
        { role: 'user', content: 'thanks' },
      ],
    });
    const view = s.requests[0]!.view;
    expect(view.toolResults).toEqual([]); // the last user message is no longer the one with results
    expect(helpers.findToolResult(view, 'toolu_b')).toEqual({
      toolUseId: 'toolu_b',
      content: 'exit 1',
      isError: true,
    });
    expect(helpers.findToolResult(view, 'toolu_nope')).toBeUndefined();
    expect(helpers.toolUses(view).map((t) => [t.id, t.input.command])).toEqual([
      ['toolu_a', 'ls'],
      ['toolu_b', 'false'],
    ]);
  });
});
