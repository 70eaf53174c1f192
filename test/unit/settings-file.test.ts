import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import { lineColumn, readSettings, settingsPath, shapeProblem } from '../../src/settings/file.js';
import { tempDir } from '../helpers/git-repo.js';

function thrown(fn: () => unknown): AgentboxError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentboxError) return error;
    throw error;
  }
  throw new Error('expected an AgentboxError, nothing was thrown');
}

describe('lineColumn', () => {
  it.each([
    ['', 0, 1, 1],
    ['abc', 0, 1, 1],
    ['abc', 2, 1, 3],
    ['abc', 3, 1, 4],
    ['a\nbc', 1, 1, 2],
    ['a\nbc', 2, 2, 1],
    ['a\nbc', 3, 2, 2],
    ['a\r\nbc', 3, 2, 1],
    ['\n\n\nx', 3, 4, 1],
  ])('%j at offset %i is line %i, column %i', (text, offset, line, column) => {
    expect(lineColumn(text, offset)).toEqual({ line, column });
  });
});

describe('settingsPath', () => {
  it.each([
    ['shared', '/repo/.claude/settings.json'],
    ['local', '/repo/.claude/settings.local.json'],
  ] as const)('%s → %s', (scope, expected) => {
    expect(settingsPath('/repo', scope)).toBe(expected);
  });
});

describe('shapeProblem', () => {
  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['other keys of any type', { model: 'opus', env: { A: '1' }, cleanupPeriodDays: 3, x: [1, null] }],
    ['hooks with groups', { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [] }], Stop: [] } }],
    ['an empty hooks object', { hooks: {} }],
    ['permissions without deny', { permissions: { allow: ['Bash(ls)'] } }],
    ['permissions with deny', { permissions: { deny: ['Read(./.env)'] } }],
    ['an agentbox record', { agentbox: { version: 1 } }],
  ])('accepts %s', (_name, value) => {
    expect(shapeProblem(value)).toBeUndefined();
  });

  it.each<[unknown, string]>([
    [[], 'the top level should be a JSON object, got an array'],
    [null, 'the top level should be a JSON object, got null'],
    ['x', 'the top level should be a JSON object, got a string'],
    [3, 'the top level should be a JSON object, got a number'],
    [{ hooks: [] }, '"hooks" should be an object keyed by event name, got an array'],
    [{ hooks: 'x' }, '"hooks" should be an object keyed by event name, got a string'],
    [{ hooks: { PreToolUse: {} } }, '"hooks.PreToolUse" should be an array of matcher groups, got an object'],
    [{ hooks: { Stop: null } }, '"hooks.Stop" should be an array of matcher groups, got null'],
    [{ hooks: { Stop: [{ hooks: [] }, 'x'] } }, '"hooks.Stop[1]" should be an object, got a string'],
    [{ hooks: { Stop: [{ matcher: '' }] } }, '"hooks.Stop[0].hooks" should be an array, got an undefined'],
    [{ hooks: { Stop: [{ hooks: {} }] } }, '"hooks.Stop[0].hooks" should be an array, got an object'],
    [{ permissions: [] }, '"permissions" should be an object, got an array'],
    [{ permissions: { deny: 'Read(x)' } }, '"permissions.deny" should be an array, got a string'],
    [{ agentbox: true }, '"agentbox" should be the object agentbox init wrote, got a boolean'],
    [{ agentbox: [] }, '"agentbox" should be the object agentbox init wrote, got an array'],
  ])('rejects %j: %s', (value, problem) => {
    expect(shapeProblem(value)).toBe(problem);
  });
});

describe('readSettings', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  const write = (text: string) => {
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, text);
    return file;
  };

  it('reads a missing file as an empty object without text', () => {
    const file = path.join(dir, 'nope.json');
    expect(readSettings(file)).toEqual({ path: file, text: undefined, value: {} });
  });

  it('returns the exact text and the parsed value', () => {
    const text = '{\n  "model": "opus",\n  "permissions": { "deny": ["Read(./.env)"] }\n}\n';
    const file = write(text);
    expect(readSettings(file)).toEqual({
      path: file,
      text,
      value: { model: 'opus', permissions: { deny: ['Read(./.env)'] } },
    });
  });

  // Claude Code rejects comments and trailing commas, so agentbox reports them with a position.
  it.each([
    ['a line comment', '{\n  // mine\n  "model": "opus"\n}\n', 'InvalidCommentToken', 2, 3, 4],
    ['a block comment', '/* x */ {}', 'InvalidCommentToken', 1, 1, 0],
    ['a trailing comma', '{\n  "a": 1,\n}\n', 'PropertyNameExpected', 3, 1, 12],
    ['a trailing comma with CRLF', '{\r\n  "a": 1,\r\n}', 'PropertyNameExpected', 3, 1, 14],
    ['a trailing comma in an array', '{"a": [1,]}', 'ValueExpected', 1, 10, 9],
    ['a missing comma', '{\n  "a": 1\n  "b": 2\n}', 'CommaExpected', 3, 3, 13],
    ['a missing value', '{"a": }', 'ValueExpected', 1, 7, 6],
    ['an empty file', '', 'ValueExpected', 1, 1, 0],
    ['a whitespace-only file', '  \n ', 'ValueExpected', 2, 2, 4],
    ['text after the object', '{"a": 1} x', 'InvalidSymbol', 1, 10, 9],
  ])('rejects %s with the path, line and column', (_name, text, code, line, column, offset) => {
    const file = write(text);
    const error = thrown(() => readSettings(file));
    expect(error.code).toBe('SETTINGS_INVALID_JSON');
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(
      `${file} is not valid JSON: ${code} at line ${line}, column ${column} (offset ${offset})`,
    );
    expect(error.hint).toBe(
      'fix the JSON by hand (Claude Code ignores the whole file while it is invalid), then run the command again',
    );
  });

  it.each([
    ['[1]', 'the top level should be a JSON object, got an array'],
    ['null', 'the top level should be a JSON object, got null'],
    [
      '{"hooks": {"PreToolUse": {}}}',
      '"hooks.PreToolUse" should be an array of matcher groups, got an object',
    ],
    ['{"permissions": {"deny": "x"}}', '"permissions.deny" should be an array, got a string'],
  ])('rejects valid JSON of the wrong shape: %s', (text, problem) => {
    const file = write(text);
    const error = thrown(() => readSettings(file));
    expect(error.code).toBe('SETTINGS_BAD_SHAPE');
    expect(error.message).toBe(`${file}: ${problem}`);
    expect(error.hint).toBe(
      'fix that entry by hand: agentbox only merges into the shape Claude Code documents, and changed nothing',
    );
  });

  it('reports a folder in place of the file as an IO error naming the path', () => {
    const file = path.join(dir, 'settings.json');
    fs.mkdirSync(file);
    const error = thrown(() => readSettings(file));
    expect(error.code).toBe('IO_FAILED');
    expect(error.message).toBe(`${file} is not a regular file, so agentbox does not read it`);
  });
});
