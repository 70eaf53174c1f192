import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClaudeArgs, type ClaudeLaunch } from '../../src/claude/args.js';
import { buildAgentEnv } from '../../src/claude/env.js';
import {
  bash,
  type ModelServer,
  type RequestView,
  scriptByTurn,
  startModelServer,
  text,
} from '../fixtures/model-server/index.js';
import { type ClaudeHome, claudeEnv, claudeHome, runClaude } from '../helpers/claude.js';
import { gitRepo, type TestRepo } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

/** The text the user typed: the last text block of the first user message (reminders come before it). */
function promptSeen(view: RequestView): string | undefined {
  const messages: { role?: string; content?: unknown }[] = view.body?.messages ?? [];
  const first = messages.find((m) => m.role === 'user');
  if (typeof first?.content === 'string') return first.content;
  const blocks = Array.isArray(first?.content) ? (first.content as { type?: string; text?: string }[]) : [];
  return blocks.filter((b) => b.type === 'text').at(-1)?.text;
}

// buildClaudeArgs against the real CLI: what the model receives is exactly what the user wrote.
describe('buildClaudeArgs with the real Claude Code', () => {
  const tag = newTestTag();
  let server: ModelServer;
  let home: ClaudeHome;
  let repo: TestRepo;

  beforeAll(async () => {
    server = await startModelServer([]);
    home = claudeHome();
    repo = gitRepo();
  });

  afterAll(async () => {
    killTagged(tag);
    await server?.close();
  });

  const env = () =>
    buildAgentEnv(claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } }), {
      cwd: repo.dir,
    });

  async function run(args: string[]) {
    const start = server.requests.length;
    const result = await runClaude(args, { cwd: repo.dir, env: env() });
    return { ...result, requests: server.requests.slice(start).map((r) => r.view) };
  }

  const launch = (more: Partial<ClaudeLaunch> & { prompt: string }): ClaudeLaunch => ({
    sessionId: randomUUID(),
    tools: ['Read', 'Bash'],
    allowedTools: [],
    ...more,
  });

  it('shows why: after -p a leading dash is a flag, and variadic flags swallow a trailing prompt', async () => {
    server.setRules([{ reply: text('ok') }]);
    const dash = await run(['-p', '--foo', '--output-format', 'stream-json', '--verbose']);
    expect(dash.code).toBe(1);
    expect(dash.stderr).toContain("unknown option '--foo'");
    const swallowed = await run([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--allowedTools',
      'Bash',
      'hello there',
    ]);
    expect(swallowed.code).toBe(1);
    expect(swallowed.stderr).toContain('"hello there" was read as a value of --allowedTools');
    expect(swallowed.stderr).toContain('Input must be provided');
    expect([...dash.requests, ...swallowed.requests]).toEqual([]);
    await expectNoProcessesLeft(tag);
  });

  it.each([
    ['a leading double dash', '--foo'],
    ['a leading dash and a flag claude knows', '-p --dangerously-skip-permissions'],
    ['a subcommand name', 'doctor'],
    [
      'everything a shell would touch',
      `--foo "double" 'single' $HOME $(whoami) \`id\` C:\\dir\\file \\n; rm -rf ~ | tee\nsecond line\n\ttabbed`,
    ],
    ['unicode', 'ünïcödé 🚀 عربى 中文 e\u0301'],
    ['blank lines around it', '  \n  leading and trailing blanks  \n\n'],
    ['windows line ends', 'one\r\ntwo\r\n'],
  ])('delivers a prompt with %s byte for byte', async (_label, prompt) => {
    server.setRules([{ reply: text('ok') }]);
    const args = buildClaudeArgs(
      launch({
        prompt,
        // Values that start with a dash and variadic flags sit before the prompt on purpose.
        allowedTools: ['Bash(git log:*)', 'Edit(//tmp/a dir/**)'],
        disallowedTools: ['WebFetch'],
        appendSystemPrompt: '-x an appended system prompt',
        includeHookEvents: true,
      }),
    );
    const result = await run(args);
    expect(result.code, result.stderr).toBe(0);
    expect(result.requests).toHaveLength(1);
    expect(promptSeen(result.requests[0]!)).toBe(prompt);
    expect(result.requests[0]!.system).toContain('-x an appended system prompt');
    expect(result.events.at(-1)).toMatchObject({ type: 'result', is_error: false, result: 'ok' });
    await expectNoProcessesLeft(tag);
  });

  it('offers exactly the given tools, none for an empty list, and applies allow and deny rules', async () => {
    server.setRules([{ reply: text('ok') }]);
    const some = await run(buildClaudeArgs(launch({ prompt: 'hi', tools: ['Read', 'Bash'] })));
    expect(some.requests[0]!.tools).toContain('Read');
    expect(some.requests[0]!.tools).toContain('Bash');
    expect(some.requests[0]!.tools).not.toContain('Write');
    const none = await run(buildClaudeArgs(launch({ prompt: 'hi', tools: [] })));
    expect(none.code, none.stderr).toBe(0);
    expect(none.requests[0]!.tools.filter((t) => ['Read', 'Bash', 'Write', 'Edit'].includes(t))).toEqual([]);

    // `touch` needs approval in -p mode; the rule (with a comma inside its parentheses) grants
    // exactly that command, a deny rule wins over an allow rule, inline settings add their own.
    const files = ['made,by-rule', 'other-file', 'denied,file', 'via-settings'];
    server.setRules(scriptByTurn([...files.map((f) => bash(`touch ${f}`)), text('done')]));
    const ruled = await run(
      buildClaudeArgs(
        launch({
          prompt: 'touch things',
          allowedTools: ['Bash(touch made,by-rule:*)', 'Bash(touch denied,file:*)'],
          disallowedTools: ['Bash(touch denied,file:*)'],
          settings: { permissions: { allow: ['Bash(touch via-settings:*)'] } },
        }),
      ),
    );
    expect(ruled.code, ruled.stderr).toBe(0);
    expect(ruled.requests.slice(1).map((r) => r.toolResults[0]?.isError)).toEqual([false, true, true, false]);
    expect(files.map((f) => fs.existsSync(path.join(repo.dir, f)))).toEqual([true, false, false, true]);
    for (const f of files) fs.rmSync(path.join(repo.dir, f), { force: true });
    await expectNoProcessesLeft(tag);
  });

  it('starts a session under the given id, resumes it with --resume=<id>, and passes the model', async () => {
    const sessionId = randomUUID();
    server.setRules([
      { when: { lastUserText: 'first prompt' }, reply: text('noted: pelican') },
      { when: { lastUserText: 'second prompt' }, reply: text('resumed') },
    ]);
    const first = await run(
      buildClaudeArgs({
        ...launch({ prompt: 'first prompt' }),
        sessionId,
        model: 'claude-scripted-test',
      }),
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.events[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId });
    expect(first.requests[0]!.model).toBe('claude-scripted-test');
    expect(first.requests[0]!.sessionId).toBe(sessionId);

    const second = await run(
      buildClaudeArgs({ ...launch({ prompt: 'second prompt' }), sessionId, resume: true }),
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.requests[0]!.sessionId).toBe(sessionId);
    expect(second.requests[0]!.allText).toContain('noted: pelican');
    expect(second.events.at(-1)).toMatchObject({ type: 'result', result: 'resumed', session_id: sessionId });
    await expectNoProcessesLeft(tag);
  });
});
