import { describe, expect, it } from 'vitest';
import {
  buildClaudeArgs,
  buildInteractiveArgs,
  type ClaudeLaunch,
  MAX_ARG_BYTES,
  OWNED_FLAGS,
} from '../../src/claude/args.js';
import { isAgentboxError } from '../../src/errors.js';

const SESSION = '0b7e4a52-3c1d-4f6e-9a8b-1c2d3e4f5a6b';
const HEAD = ['-p', '--output-format=stream-json', '--verbose'];

const launch = (more: Partial<ClaudeLaunch> = {}): ClaudeLaunch => ({
  prompt: 'do the thing',
  sessionId: SESSION,
  tools: ['Read', 'Grep'],
  allowedTools: [],
  ...more,
});

function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isAgentboxError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected an AgentboxError, nothing was thrown');
}

describe('buildClaudeArgs', () => {
  it.each<[string, Partial<ClaudeLaunch>, string[]]>([
    ['the minimum', {}, [...HEAD, `--session-id=${SESSION}`, '--tools=Read,Grep', '--', 'do the thing']],
    [
      'resume uses --resume, never --continue',
      { resume: true },
      [...HEAD, `--resume=${SESSION}`, '--tools=Read,Grep', '--', 'do the thing'],
    ],
    [
      'no tools at all',
      { tools: [] },
      [...HEAD, `--session-id=${SESSION}`, '--tools=', '--', 'do the thing'],
    ],
    [
      'one flag per rule, patterns kept whole',
      {
        allowedTools: ['Bash(git log:*)', 'Edit(//abs/my dir/**)', 'Bash(touch a,b:*)'],
        disallowedTools: ['Bash(rm:*)', 'WebFetch'],
      },
      [
        ...HEAD,
        `--session-id=${SESSION}`,
        '--tools=Read,Grep',
        '--allowedTools=Bash(git log:*)',
        '--allowedTools=Edit(//abs/my dir/**)',
        '--allowedTools=Bash(touch a,b:*)',
        '--disallowedTools=Bash(rm:*)',
        '--disallowedTools=WebFetch',
        '--',
        'do the thing',
      ],
    ],
    [
      'every option, in a fixed order',
      {
        appendSystemPrompt: '-x starts with a dash\nand spans lines',
        settings: { permissions: { deny: ['Read(./.agents/**)'] }, hooks: {} },
        model: 'claude-sonnet-4-5',
        permissionMode: 'plan',
        includeHookEvents: true,
        extraArgs: ['--add-dir', '/tmp/extra', '--max-budget-usd', '2'],
      },
      [
        ...HEAD,
        `--session-id=${SESSION}`,
        '--tools=Read,Grep',
        '--append-system-prompt=-x starts with a dash\nand spans lines',
        '--settings={"permissions":{"deny":["Read(./.agents/**)"]},"hooks":{}}',
        '--model=claude-sonnet-4-5',
        '--permission-mode=plan',
        '--include-hook-events',
        '--add-dir',
        '/tmp/extra',
        '--max-budget-usd',
        '2',
        '--',
        'do the thing',
      ],
    ],
    [
      'null and empty optional values are left out',
      { model: null, appendSystemPrompt: '', permissionMode: '', includeHookEvents: false, extraArgs: [] },
      [...HEAD, `--session-id=${SESSION}`, '--tools=Read,Grep', '--', 'do the thing'],
    ],
  ])('%s', (_label, more, expected) => {
    expect(buildClaudeArgs(launch(more))).toEqual(expected);
  });

  it.each([
    ['quotes', `fix "a; rm -rf ~" and 'b'`],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${HOME} is the point.
    ['command substitution', 'explain $(whoami) and `id` and ${HOME}'],
    ['shell operators', 'a; rm -rf ~ && echo | tee /etc/passwd > x < y &'],
    ['newlines and tabs', 'line one\nline two\r\n\tindented\n'],
    ['a leading dash', '-x'],
    ['a leading double dash', '--foo bar'],
    ['exactly --', '--'],
    ['a flag claude knows', '--dangerously-skip-permissions'],
    ['a subcommand name', 'doctor'],
    ['backslashes', 'C:\\path\\to "\\"quoted\\""'],
    ['unicode', 'ünïcödé 🚀 عربى 中文 \u200b zero-width'],
    ['leading and trailing blanks', '  spaced  '],
    ['a slash command', '/run_a1b2c3:scout_a1b2c3 why'],
  ])('the prompt with %s is the last element, after --', (_label, prompt) => {
    const args = buildClaudeArgs(launch({ prompt }));
    expect(args.at(-1)).toBe(prompt);
    expect(args.at(-2)).toBe('--');
    expect(args.indexOf('--')).toBe(args.length - 2);
  });

  it('keeps every valued flag in --flag=value form, so no value is read as a flag or a prompt', () => {
    const args = buildClaudeArgs(
      launch({
        allowedTools: ['-rf'],
        appendSystemPrompt: '--verbose',
        model: '-m',
        settings: {},
      }),
    );
    const beforePrompt = args.slice(0, -2);
    for (const arg of beforePrompt) expect(arg.startsWith('-'), arg).toBe(true);
    expect(beforePrompt).toContain('--allowedTools=-rf');
    expect(beforePrompt).toContain('--append-system-prompt=--verbose');
  });

  it.each<[string, Partial<ClaudeLaunch>, RegExp]>([
    ['an empty prompt', { prompt: '' }, /USAGE: the prompt for claude is empty/],
    ['a blank prompt', { prompt: ' \n\t ' }, /USAGE: the prompt for claude is empty/],
    ['a session id that is not a UUID', { sessionId: 'latest' }, /not a session id/],
    ['a session id that looks like a flag', { sessionId: '--continue' }, /not a session id/],
    ['a tool list entry with a comma', { tools: ['Read,Bash'] }, /not a tool name/],
    ['a tool rule in tools', { tools: ['Bash(git log:*)'] }, /not a tool name/],
    ['an empty tool name', { tools: [''] }, /not a tool name/],
    ['an empty allow rule', { allowedTools: [' '] }, /empty tool rule/],
    ['an empty deny rule', { disallowedTools: [''] }, /empty tool rule/],
    ['extra -- would swallow the flags after it', { extraArgs: ['--'] }, /"--" is set by agentbox/],
    ['extra --output-format', { extraArgs: ['--output-format', 'text'] }, /--output-format/],
    ['extra --output-format=text', { extraArgs: ['--output-format=text'] }, /--output-format=text/],
    ['extra --continue', { extraArgs: ['--continue'] }, /--continue/],
    ['extra -c', { extraArgs: ['-c'] }, /"-c"/],
    ['extra --resume', { extraArgs: ['--resume', SESSION] }, /--resume/],
    ['extra --allowedTools', { extraArgs: ['--allowedTools', 'Bash'] }, /--allowedTools/],
    ['a NUL in the prompt', { prompt: 'a\0b' }, /NUL byte/],
    ['a NUL in the system prompt', { appendSystemPrompt: 'a\0b' }, /NUL byte/],
    ['a prompt over the argv limit', { prompt: 'x'.repeat(MAX_ARG_BYTES + 1) }, /over the system's limit/],
    ['a multi-byte prompt over the limit', { prompt: 'é'.repeat(MAX_ARG_BYTES / 2 + 1) }, /bytes, over/],
  ])('refuses %s', (_label, more, message) => {
    expect(thrown(() => buildClaudeArgs(launch(more)))).toMatch(message);
  });

  it('accepts a prompt right at the argv limit', () => {
    expect(buildClaudeArgs(launch({ prompt: 'x'.repeat(MAX_ARG_BYTES) })).at(-1)).toHaveLength(MAX_ARG_BYTES);
  });

  it('owns the flags that would break the stream, the session or the prompt position', () => {
    for (const flag of ['-p', '--output-format', '--session-id', '--resume', '--continue', '--tools']) {
      expect(OWNED_FLAGS).toContain(flag);
    }
  });
});

describe('buildInteractiveArgs', () => {
  const id = '363b6a28-3e0b-413f-ae83-582cc6237329';

  it('starts a fixed session id, or resumes exactly that one; no -p, no stream', () => {
    expect(buildInteractiveArgs({ sessionId: id, allowedTools: ['*'] })).toEqual([
      `--session-id=${id}`,
      '--allowedTools=*',
    ]);
    const resumed = buildInteractiveArgs({
      sessionId: id,
      resume: true,
      allowedTools: [],
      appendSystemPrompt: 'be careful',
      settings: { hooks: {} },
      model: 'opus',
    });
    expect(resumed).toEqual([
      `--resume=${id}`,
      '--append-system-prompt=be careful',
      '--settings={"hooks":{}}',
      '--model=opus',
    ]);
    expect(resumed.some((a) => a === '-p' || a.startsWith('--output-format'))).toBe(false);
  });

  it('puts a first message last, after --, so it is never read as a flag', () => {
    expect(buildInteractiveArgs({ sessionId: id, allowedTools: [], prompt: '--help me' }).slice(-2)).toEqual([
      '--',
      '--help me',
    ]);
    expect(buildInteractiveArgs({ sessionId: id, allowedTools: [], prompt: '  ' })).toEqual([
      `--session-id=${id}`,
    ]);
  });

  it('refuses a session id that is not a UUID', () => {
    expect(() => buildInteractiveArgs({ sessionId: '--continue', allowedTools: [] })).toThrow(
      /not a session id/,
    );
  });
});
