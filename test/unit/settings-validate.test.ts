import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/settings/file.js';
import { planInstall } from '../../src/settings/managed.js';
import { type SettingsIssue, validateSettings } from '../../src/settings/validate.js';

const command = (extra: JsonObject = {}): JsonObject => ({ type: 'command', command: 'echo hi', ...extra });
const http = (extra: JsonObject = {}): JsonObject => ({
  type: 'http',
  url: 'http://127.0.0.1:8080/hook',
  ...extra,
});
/** Settings with one hook in one PreToolUse group. */
const withHook = (hook: JsonObject | string, group: JsonObject = {}): JsonObject => ({
  hooks: { PreToolUse: [{ matcher: 'Bash', ...group, hooks: [hook] }] },
});
const at = (path: string, message: string): SettingsIssue => ({ path, message });
const H = 'hooks.PreToolUse[0].hooks[0]';
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal "${PORT}" is what Claude Code rejects.
const PORT_URL = 'http://127.0.0.1:${PORT}/hook';

describe('validateSettings', () => {
  it.each<[string, JsonObject]>([
    ['an empty file', {}],
    ['keys it does not check', { model: 'opus', env: { A: '1' }, statusLine: { type: 'command' } }],
    ['permissions lists of strings', { permissions: { allow: ['Bash(ls)'], deny: [], ask: ['Edit'] } }],
    [
      'permissions keys it does not check',
      { permissions: { defaultMode: 'plan', additionalDirectories: [1] } },
    ],
    ['a command hook', withHook(command())],
    ['a command hook with a timeout', withHook(command({ timeout: 30 }))],
    ['a fractional timeout', withHook(command({ timeout: 0.5 }))],
    ['a group without a matcher', { hooks: { Stop: [{ hooks: [command()] }] } }],
    ['an empty matcher', withHook(command(), { matcher: '' })],
    ['an event with no groups', { hooks: { Stop: [] } }],
    ['a group with no hooks', { hooks: { Stop: [{ hooks: [] }] } }],
    ['an unknown hook type (a newer Claude Code)', withHook({ type: 'prompt', prompt: 'is it safe?' })],
    ['an unknown type without the fields of command', withHook({ type: 'mcp_tool' })],
    ['an https hook', withHook(http({ url: 'https://hooks.example.com/x' }))],
    [
      'an http hook with headers and allowed variables',
      withHook(http({ headers: { Authorization: 'Bearer $TOKEN' }, allowedEnvVars: ['TOKEN'] })),
    ],
    ['the groups key "hooks" inside top-level hooks', { hooks: { Stop: [{ hooks: [command()] }] } }],
    ['everything agentbox init writes', JSON.parse(planInstall(undefined, {}).text)],
  ])('accepts %s', (_name, value) => {
    expect(validateSettings(value)).toEqual([]);
  });

  it.each<[string, JsonObject, SettingsIssue[]]>([
    [
      'permissions that are not an object',
      { permissions: ['Read(x)'] },
      [at('permissions', 'must be an object')],
    ],
    [
      'a deny list that is a string',
      { permissions: { deny: 'Read(x)' } },
      [at('permissions.deny', 'must be an array of rule strings')],
    ],
    [
      'a non-string deny rule',
      { permissions: { deny: ['Read(x)', 3, { tool: 'Bash' }] } },
      [at('permissions.deny[1]', 'must be a string'), at('permissions.deny[2]', 'must be a string')],
    ],
    [
      'a non-string allow and ask rule',
      { permissions: { allow: [null], ask: [true] } },
      [at('permissions.allow[0]', 'must be a string'), at('permissions.ask[0]', 'must be a string')],
    ],
    ['hooks that are an array', { hooks: [] }, [at('hooks', 'must be an object keyed by event name')]],
    [
      'an event that is not an array',
      { hooks: { PreToolUse: {} } },
      [at('hooks.PreToolUse', 'must be an array of matcher groups')],
    ],
    [
      'a group that is not an object',
      { hooks: { Stop: ['echo'] } },
      [at('hooks.Stop[0]', 'must be an object with "hooks"')],
    ],
    [
      'a matcher that is not a string',
      withHook(command(), { matcher: ['Bash', 'Edit'] }),
      [at('hooks.PreToolUse[0].matcher', 'must be a string')],
    ],
    [
      'a group without hooks',
      { hooks: { Stop: [{ matcher: 'x' }] } },
      [at('hooks.Stop[0].hooks', 'must be an array')],
    ],
    ['a hook that is a string', withHook('echo hi'), [at(H, 'must be an object')]],
    [
      'a timeout given as a string',
      withHook(command({ timeout: '10' })),
      [at(`${H}.timeout`, 'must be a positive number of seconds, got "10"')],
    ],
    [
      'a zero timeout',
      withHook(command({ timeout: 0 })),
      [at(`${H}.timeout`, 'must be a positive number of seconds, got 0')],
    ],
    [
      'a negative timeout',
      withHook(command({ timeout: -5 })),
      [at(`${H}.timeout`, 'must be a positive number of seconds, got -5')],
    ],
    [
      'a hook without a type',
      withHook({ command: 'echo hi' }),
      [at(`${H}.type`, 'must be a string such as "command" or "http"')],
    ],
    [
      'a command hook without a command',
      withHook({ type: 'command' }),
      [at(`${H}.command`, 'must be a non-empty string')],
    ],
    [
      'an empty command',
      withHook(command({ command: '' })),
      [at(`${H}.command`, 'must be a non-empty string')],
    ],
    [
      `an http url with a variable: ${PORT_URL}`,
      withHook(http({ url: PORT_URL })),
      [at(`${H}.url`, `cannot contain variables, got ${JSON.stringify(PORT_URL)}`)],
    ],
    [
      'an http url with $PORT',
      withHook(http({ url: 'http://127.0.0.1:$PORT/hook' })),
      [at(`${H}.url`, 'cannot contain variables, got "http://127.0.0.1:$PORT/hook"')],
    ],
    ['an http hook without a url', withHook({ type: 'http' }), [at(`${H}.url`, 'must be a string')]],
    [
      'an http url that is not a URL',
      withHook(http({ url: 'localhost:8080' })),
      [at(`${H}.url`, 'must be an http(s) URL, got "localhost:8080"')],
    ],
    [
      'an ftp url',
      withHook(http({ url: 'ftp://example.com/x' })),
      [at(`${H}.url`, 'must be an http(s) URL, got "ftp://example.com/x"')],
    ],
    [
      'headers that are not an object',
      withHook(http({ headers: ['X-A: 1'] })),
      [at(`${H}.headers`, 'must be an object of strings')],
    ],
    [
      'a header value that is a number',
      withHook(http({ headers: { 'X-Retry': 3 } })),
      [at(`${H}.headers.X-Retry`, 'must be a string')],
    ],
    [
      'allowedEnvVars with a non-string',
      withHook(http({ allowedEnvVars: ['TOKEN', 1] })),
      [at(`${H}.allowedEnvVars`, 'must be an array of strings')],
    ],
    [
      'allowedEnvVars as a string',
      withHook(http({ allowedEnvVars: 'TOKEN' })),
      [at(`${H}.allowedEnvVars`, 'must be an array of strings')],
    ],
    [
      'a nested "hooks" key under another key',
      { agentbox: { version: 1, hooks: ['PreToolUse'] } },
      [at('agentbox.hooks', 'a "hooks" key is only allowed at the top level')],
    ],
    [
      'a "hooks" key deep inside arrays',
      { env: { list: [{ x: { hooks: {} } }] } },
      [at('env.list[0].x.hooks', 'a "hooks" key is only allowed at the top level')],
    ],
    [
      'a "hooks" key inside permissions',
      { permissions: { hooks: [] } },
      [at('permissions.hooks', 'a "hooks" key is only allowed at the top level')],
    ],
  ])('reports %s', (_name, value, issues) => {
    expect(validateSettings(value)).toEqual(issues);
  });

  it('reports every problem, permissions first, then misplaced hooks, then hooks', () => {
    const value: JsonObject = {
      hooks: { Stop: [{ matcher: 1, hooks: [{ type: 'command', command: '', timeout: 'x' }] }] },
      extra: { hooks: {} },
      permissions: { deny: [false] },
    };
    expect(validateSettings(value)).toEqual([
      at('permissions.deny[0]', 'must be a string'),
      at('extra.hooks', 'a "hooks" key is only allowed at the top level'),
      at('hooks.Stop[0].matcher', 'must be a string'),
      at('hooks.Stop[0].hooks[0].timeout', 'must be a positive number of seconds, got "x"'),
      at('hooks.Stop[0].hooks[0].command', 'must be a non-empty string'),
    ]);
  });
});
