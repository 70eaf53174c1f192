import { afterEach, describe, expect, it } from 'vitest';
import { type Endpoint, type HookInput, startEndpoint } from '../../src/endpoint/server.js';
import { HOOK_SCRIPT, runSettings } from '../../src/endpoint/settings.js';
import { validateSettings } from '../../src/settings/validate.js';

let endpoint: Endpoint | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

async function start(
  handler = async (_e: string, input: HookInput) => ({ echo: input.x ?? null }),
  maxBodyBytes?: number,
) {
  const problems: { status: number; reason: string }[] = [];
  const seen: string[] = [];
  endpoint = await startEndpoint({
    handler: async (event, input) => {
      seen.push(event);
      return handler(event, input);
    },
    maxBodyBytes,
    onProblem: (p) => problems.push(p),
  });
  const post = (path: string, body: string, token: string | null = endpoint!.token) =>
    fetch(`${endpoint!.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body,
    });
  return { post, problems, seen };
}

describe('hook endpoint', () => {
  it('listens on loopback only, on a free port', async () => {
    await start();
    expect(endpoint!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoint!.port).toBeGreaterThan(0);
    expect(endpoint!.token).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers a hook with the handler result', async () => {
    const { post, seen } = await start();
    const res = await post('/hook/Stop', JSON.stringify({ hook_event_name: 'Stop', x: 7 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echo: 7 });
    expect(seen).toEqual(['Stop']);
  });

  it.each([
    ['no secret', null, 401],
    ['a wrong secret', 'f'.repeat(64), 401],
    ['a secret of another length', 'short', 401],
  ])('refuses %s with 401 and keeps serving', async (_n, token, status) => {
    const { post, seen, problems } = await start();
    expect((await post('/hook/Stop', '{}', token)).status).toBe(status);
    expect(seen).toEqual([]);
    expect(problems[0]!.status).toBe(401);
    expect((await post('/hook/Stop', '{"x":1}')).status).toBe(200);
  });

  it('refuses a body over the limit with 413 (declared or streamed) and keeps serving', async () => {
    const { post, seen } = await start(undefined, 1024);
    expect((await post('/hook/PostToolUse', JSON.stringify({ big: 'x'.repeat(5000) }))).status).toBe(413);
    const streamed = await fetch(`${endpoint!.url}/hook/PostToolUse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${endpoint!.token}` },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('x'.repeat(500)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(seen).toEqual([]);
    expect((await post('/hook/Stop', '{"x":2}')).status).toBe(200);
  });

  it.each([
    ['not JSON', '{nope', 400],
    ['a JSON array', '[1]', 400],
    ['a JSON string', '"x"', 400],
  ])('refuses a body that is %s with 400', async (_n, body, status) => {
    const { post } = await start();
    expect((await post('/hook/Stop', body)).status).toBe(status);
    expect((await post('/hook/Stop', '{"x":3}')).status).toBe(200);
  });

  it('answers 500 when the handler throws, and keeps serving', async () => {
    const { post } = await start(async () => {
      throw new Error('boom');
    });
    const res = await post('/hook/Stop', '{}');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'handler failed: boom' });
  });

  it('serves only POST /hook/<Event>', async () => {
    const { post } = await start();
    expect((await post('/other', '{}')).status).toBe(404);
    const get = await fetch(`${endpoint!.url}/hook/Stop`, {
      headers: { authorization: `Bearer ${endpoint!.token}` },
    });
    expect(get.status).toBe(404);
  });

  it('close() is idempotent', async () => {
    const { post } = await start();
    // A kept-alive connection (as Claude Code's hooks hold one) must not keep either close waiting.
    expect((await post('/hook/Stop', '{"x":4}')).status).toBe(200);
    const first = endpoint!.close();
    const second = endpoint!.close();
    expect(second).toBe(first);
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    await expect(endpoint!.close()).resolves.toBeUndefined();
    await expect(post('/hook/Stop', '{}')).rejects.toThrow();
  });
});

describe('runSettings', () => {
  const base = {
    endpointUrl: 'http://127.0.0.1:4567',
    token: 'f'.repeat(64),
    hookFile: '/private/run-x/hook.json',
    deny: ['Read(//x/**)'],
    stopTimeoutSeconds: 90,
    guard: { ledgerDir: '/repo/.agents', repoRoot: '/repo', writes: true },
    history: 'stream' as const,
    node: '/usr/bin/node',
  };
  type Group = { matcher?: string; hooks: Record<string, unknown>[] };
  const hooksOf = (settings: Record<string, unknown>) => settings.hooks as Record<string, Group[]>;

  it('is valid for Claude Code, writes the secret into the headers (the file is private) and no variable in the url', () => {
    const settings = runSettings(base);
    expect(validateSettings(settings as never)).toEqual([]);
    expect(settings.permissions).toEqual({ deny: ['Read(//x/**)'] });
    const hooks = hooksOf(settings);
    // A headless run's session start comes from its stream (src/run/begin/session-start.ts); its
    // prompt and its end are its own: no round trip for them.
    expect(Object.keys(hooks)).toEqual([
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'Stop',
      'SubagentStop',
    ]);
    expect(Object.keys(hooksOf(runSettings({ ...base, history: 'hooks' })))).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'Stop',
      'SubagentStop',
      'SessionEnd',
    ]);
    const text = JSON.stringify(hooks);
    expect(text).not.toContain('${');
    // Nothing is read from the environment: the agent's `env` must never show the secret.
    expect(text).not.toContain('allowedEnvVars');
    expect(text).not.toContain('$AGENTBOX');
    expect(hooks.Stop![0]!.hooks[0]).toMatchObject({
      type: 'http',
      url: 'http://127.0.0.1:4567/hook/Stop',
      headers: { Authorization: `Bearer ${'f'.repeat(64)}` },
      timeout: 90,
    });
    expect(hooks.Stop![0]!.hooks[0]!.onFailure).toBeUndefined();
  });

  it('sends SessionStart through the command-hook script where there is no stream (Claude Code never fires an http SessionStart)', () => {
    const [group] = hooksOf(runSettings({ ...base, history: 'hooks' })).SessionStart!;
    expect(group!.hooks[0]).toMatchObject({ type: 'command' });
    expect(group!.hooks[0]!.command).toBe(
      `'/usr/bin/node' '${HOOK_SCRIPT}' SessionStart '/private/run-x/hook.json'`,
    );
  });

  it('guards Bash and Read only where they name the ledger, agentbox or the main tree, and fails closed', () => {
    const pre = hooksOf(runSettings(base)).PreToolUse!;
    const byMatcher: Record<string, Record<string, unknown>[]> = Object.fromEntries(
      pre.map((g) => [g.matcher ?? '', g.hooks]),
    );
    expect(byMatcher.Bash!.map((h) => h.if)).toEqual([
      'Bash(*.agents*)',
      'Bash(*agentbox merge*)',
      'Bash(*agentbox discard*)',
      'Bash(*agentbox apply*)',
      'Bash(*agentbox.cjs*)',
      'Bash(*agentbox.js*)',
      'Bash(*claude*)',
      'Bash(*anthropic*)',
      'Bash(*/repo*)',
    ]);
    expect(byMatcher.Read!.map((h) => h.if)).toEqual(['Read(//repo/.agents/**)']);
    expect(byMatcher['Skill|SlashCommand|Task|Agent']![0]!.if).toBeUndefined();
    expect(byMatcher['Write|Edit|MultiEdit|NotebookEdit']![0]!.if).toBeUndefined();
    for (const hook of pre.flatMap((g) => g.hooks)) {
      expect(hook).toMatchObject({
        type: 'http',
        url: 'http://127.0.0.1:4567/hook/PreToolUse',
        onFailure: 'block',
      });
    }
  });

  it('does not guard writes in a run that cannot write, nor the main tree in Bash', () => {
    const pre = hooksOf(runSettings({ ...base, guard: { ...base.guard, writes: false } })).PreToolUse!;
    expect(pre.map((g) => g.matcher)).toEqual(['Bash', 'Read', 'Skill|SlashCommand|Task|Agent']);
    expect(pre[0]!.hooks.map((h) => h.if)).not.toContain('Bash(*/repo*)');
    expect(pre[0]!.hooks).toHaveLength(8);
  });

  it('leaves the write tools to Claude Code’s permission rules in a sandboxed fix run (no per-call hook)', () => {
    const pre = hooksOf(runSettings({ ...base, guard: { ...base.guard, writeTools: false } })).PreToolUse!;
    expect(pre.map((g) => g.matcher)).toEqual(['Bash', 'Read', 'Skill|SlashCommand|Task|Agent']);
    // The main tree named in Bash still meets the early guard.
    expect(pre[0]!.hooks.map((h) => h.if)).toContain('Bash(*/repo*)');
  });

  it('sends every Read, Grep and Glob call of a sandboxed run through the guard (they ignore the read fence)', () => {
    const settings = runSettings({ ...base, guard: { ...base.guard, everyRead: true } });
    const pre = hooksOf(settings).PreToolUse!;
    expect(pre.map((g) => g.matcher)).toEqual([
      'Bash',
      'Read|Grep|Glob|LS|NotebookRead',
      'Skill|SlashCommand|Task|Agent',
      'Write|Edit|MultiEdit|NotebookEdit',
    ]);
    expect(pre[1]!.hooks).toHaveLength(1);
    expect(pre[1]!.hooks[0]!.if).toBeUndefined();
    expect(validateSettings(settings as never)).toEqual([]);
  });

  it('guards every Bash and Read call when a path cannot go into a rule pattern', () => {
    const odd = {
      ...base,
      guard: { ledgerDir: '/my repo (1)/.agents', repoRoot: '/my repo (1)', writes: true },
    };
    const pre = hooksOf(runSettings(odd)).PreToolUse!;
    expect(pre[0]!.hooks).toHaveLength(1);
    expect(pre[0]!.hooks[0]!.if).toBeUndefined();
    expect(pre[1]!.hooks[0]!.if).toBeUndefined();
    expect(validateSettings(runSettings(odd) as never)).toEqual([]);
  });

  it('takes tool history from PostToolUse hooks only when there is no stream to read', () => {
    const stream = hooksOf(runSettings(base));
    expect(stream.PostToolUse).toEqual([
      { matcher: 'Task|Agent', hooks: [expect.objectContaining({ type: 'http' })] },
    ]);
    expect(stream.PostToolUseFailure![0]!.matcher).toBe('Task|Agent');
    const hooks = hooksOf(runSettings({ ...base, history: 'hooks' }));
    expect(hooks.PostToolUse![0]!.matcher).toBeUndefined();
    expect(hooks.PostToolUseFailure![0]!.matcher).toBeUndefined();
  });
});
