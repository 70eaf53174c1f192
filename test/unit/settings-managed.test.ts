import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../src/settings/file.js';
import {
  DENY_RULES,
  GUARD_EVENT,
  GUARD_GROUP,
  GUARD_MARK,
  MARKER_KEY,
  planInstall,
  planUninstall,
  readRecord,
} from '../../src/settings/managed.js';
import { validateSettings } from '../../src/settings/validate.js';

const NOTE = 'written by agentbox init; agentbox uninstall removes exactly the entries listed here';
const pretty = (value: unknown, indent: string | number = 2, eol = '\n') =>
  `${JSON.stringify(value, null, indent).replaceAll('\n', eol)}${eol}`;
const parse = (text: string) => JSON.parse(text) as JsonObject;
const install = (text: string | undefined) => planInstall(text, text === undefined ? {} : parse(text));
const uninstall = (text: string) => planUninstall(text, parse(text));

/** `original` with characters only added, never changed or removed: the user's bytes are all kept. */
function isSubsequence(original: string, text: string): boolean {
  let i = 0;
  for (const char of text) if (char === original[i]) i++;
  return i === original.length;
}

/** Every object key in a JSON value, with its dotted path. */
function keyPaths(value: Json, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keyPaths(item, `${at}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => [
    `${at}.${key}`,
    ...keyPaths(child, `${at}.${key}`),
  ]);
}

const userPreHook = { matcher: 'Edit', hooks: [{ type: 'command', command: 'echo pre' }] };
const userStopHook = { hooks: [{ type: 'command', command: 'echo stop', timeout: 5 }] };
const userSettings = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test)'], deny: ['Read(./.env)'] },
  hooks: { PreToolUse: [userPreHook], Stop: [userStopHook] },
  env: { FOO: '1' },
};

/** Settings files as people write them; every one must survive install → uninstall byte for byte. */
const ROUND_TRIPS: [string, string][] = [
  ['{}', '{}'],
  ['{} with a newline', '{}\n'],
  ['only another key', pretty({ model: 'opus' })],
  ['user hooks, rules and keys, 2 spaces', pretty(userSettings)],
  ['user hooks, rules and keys, 4 spaces', pretty(userSettings, 4)],
  ['user hooks, rules and keys, tabs', pretty(userSettings, '\t')],
  ['user hooks, rules and keys, CRLF', pretty(userSettings, 2, '\r\n')],
  ['tabs and CRLF', pretty({ model: 'opus', permissions: { deny: [] } }, '\t', '\r\n')],
  ['no final newline', pretty(userSettings).trimEnd()],
  ['minified on one line', JSON.stringify(userSettings)],
  ['empty containers', pretty({ permissions: {}, hooks: {} })],
  ['empty arrays', pretty({ permissions: { deny: [] }, hooks: { PreToolUse: [] } })],
  [
    'inline arrays and one-line hook groups',
    '{\n  "permissions": { "deny": ["Read(./.env)"] },\n  "hooks": {\n    "PreToolUse": [\n' +
      '      { "matcher": "Edit", "hooks": [ { "type": "command", "command": "echo pre" } ] }\n    ],\n' +
      '    "Stop": [{ "hooks": [{ "type": "command", "command": "echo stop" }] }]\n  }\n}\n',
  ],
  ['new keys after an inline object', '{\n  "permissions": { "deny": ["Read(./.env)"] }\n}\n'],
  ['a rule agentbox also adds, already there', pretty({ permissions: { deny: ['Read(./.agents/**)'] } })],
  ['all of agentbox’s rules already there', pretty({ permissions: { deny: [...DENY_RULES] } })],
];

const freshRecord = (created: string[]) => ({
  note: NOTE,
  version: 1,
  deny: [...DENY_RULES],
  guard_events: [GUARD_EVENT],
  created,
});

describe('planInstall', () => {
  it('writes the whole file when there is none', () => {
    const plan = install(undefined);
    expect(plan).toEqual({
      text: pretty({
        permissions: { deny: [...DENY_RULES] },
        hooks: { PreToolUse: [GUARD_GROUP] },
        agentbox: freshRecord(['file', 'permissions', 'permissions.deny', 'hooks', 'hooks.PreToolUse']),
      }),
      changed: true,
      addedDeny: [...DENY_RULES],
      addedHooks: [GUARD_EVENT],
    });
  });

  it.each([
    ['{}', ''],
    ['{}\n', '\n'],
  ])('fills %j, keeping what follows the object', (text, tail) => {
    const plan = install(text);
    const expected = pretty({
      permissions: { deny: [...DENY_RULES] },
      hooks: { PreToolUse: [GUARD_GROUP] },
      agentbox: freshRecord(['permissions', 'permissions.deny', 'hooks', 'hooks.PreToolUse']),
    }).trimEnd();
    expect(plan.text).toBe(`${expected}${tail}`);
    expect(plan.changed).toBe(true);
  });

  it('adds to the user’s hooks and rules without touching a byte of theirs', () => {
    const original =
      '{\n  "model": "opus",\n  "permissions": {\n    "deny": ["Read(./.env)"]\n  },\n' +
      '  "hooks": {\n    "PreToolUse": [\n      { "matcher": "Edit", "hooks": [{ "type": "command", "command": "echo pre" }] }\n' +
      '    ],\n    "Stop": [{ "hooks": [{ "type": "command", "command": "echo stop" }] }]\n  },\n' +
      '  "env": { "FOO": "1" }\n}\n';
    const block = (value: unknown, indent: string) =>
      JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`);
    const record = freshRecord([]);
    const expected = original
      .replace(
        '"deny": ["Read(./.env)"]',
        `"deny": ["Read(./.env)", ${DENY_RULES.map((rule) => JSON.stringify(rule)).join(', ')}]`,
      )
      .replace('"echo pre" }] }\n', `"echo pre" }] },\n      ${block(GUARD_GROUP, '      ')}\n`)
      .replace('"env": { "FOO": "1" }\n', `"env": { "FOO": "1" },\n  "agentbox": ${block(record, '  ')}\n`);

    const plan = install(original);
    expect(plan.text).toBe(expected);
    expect(plan.addedDeny).toEqual([...DENY_RULES]);
    expect(plan.addedHooks).toEqual([GUARD_EVENT]);
    expect(parse(plan.text)).toEqual({
      model: 'opus',
      permissions: { deny: ['Read(./.env)', ...DENY_RULES] },
      hooks: {
        PreToolUse: [userPreHook, GUARD_GROUP],
        Stop: [{ hooks: [{ type: 'command', command: 'echo stop' }] }],
      },
      env: { FOO: '1' },
      agentbox: record,
    });
  });

  it.each(ROUND_TRIPS)('keeps every byte of %s and adds valid settings', (_name, original) => {
    const plan = install(original);
    expect(plan.changed).toBe(true);
    expect(isSubsequence(original, plan.text)).toBe(true);
    expect(validateSettings(parse(plan.text))).toEqual([]);
  });

  it.each(ROUND_TRIPS)('is idempotent on %s', (_name, original) => {
    const first = install(original);
    const second = install(first.text);
    expect(second).toEqual({ text: first.text, changed: false, addedDeny: [], addedHooks: [] });
  });

  it('keeps the file’s line endings and indentation in what it adds', () => {
    const crlf = install(pretty(userSettings, '\t', '\r\n')).text;
    expect(crlf.split('\r\n').some((line) => line.includes('\n'))).toBe(false);
    expect(crlf.split('\r\n').filter((line) => /^ /.test(line))).toEqual([]);
    const four = install(pretty({ model: 'opus' }, 4)).text;
    expect(four).toContain('\n    "permissions": {\n        "deny": [\n            "Read(./.agents/**)",');
  });

  it('does not claim a deny rule the user already had', () => {
    const plan = install(pretty({ permissions: { deny: ['Read(./.agents/**)', 'Read(./.env)'] } }));
    const rest = DENY_RULES.filter((rule) => rule !== 'Read(./.agents/**)');
    expect(plan.addedDeny).toEqual(rest);
    expect(parse(plan.text).permissions).toEqual({ deny: ['Read(./.agents/**)', 'Read(./.env)', ...rest] });
    expect(readRecord(parse(plan.text))).toEqual({
      ...freshRecord(['hooks', 'hooks.PreToolUse']),
      deny: rest,
    });
  });

  it('adds nothing but the record when the guard and every rule are already there', () => {
    const plan = install(
      pretty({ permissions: { deny: [...DENY_RULES] }, hooks: { PreToolUse: [GUARD_GROUP] } }),
    );
    expect(plan.addedDeny).toEqual([]);
    expect(plan.addedHooks).toEqual([]);
    expect(readRecord(parse(plan.text))).toEqual({ ...freshRecord([]), deny: [], guard_events: [] });
  });

  it('puts back a rule the user deleted after init, and only that', () => {
    const installed = install(pretty(userSettings)).text;
    const edited = installed.replace('\n      "Bash(agentbox merge:*)",', '');
    expect(parse(edited).permissions).not.toEqual(parse(installed).permissions);
    const plan = install(edited);
    expect(plan.addedDeny).toEqual(['Bash(agentbox merge:*)']);
    expect(plan.addedHooks).toEqual([]);
    expect(readRecord(parse(plan.text))).toEqual(readRecord(parse(installed)));
    expect(uninstall(plan.text).text).toBe(pretty(userSettings));
  });

  it.each(ROUND_TRIPS)('writes no "hooks" key inside the record for %s', (_name, original) => {
    const value = parse(install(original).text);
    expect(keyPaths(value[MARKER_KEY]!).filter((key) => key.endsWith('.hooks'))).toEqual([]);
    expect(Object.keys(value[MARKER_KEY] as JsonObject)).toEqual([
      'note',
      'version',
      'deny',
      'guard_events',
      'created',
    ]);
  });
});

describe('planUninstall', () => {
  it.each(ROUND_TRIPS)('gives back %s exactly', (_name, original) => {
    const plan = uninstall(install(original).text);
    expect(plan.text).toBe(original);
    expect(plan.changed).toBe(true);
    expect(plan.removedHooks).toBe(1);
  });

  it('deletes the file init created', () => {
    const plan = uninstall(install(undefined).text);
    expect(plan).toEqual({
      text: null,
      changed: true,
      removedDeny: [...DENY_RULES].reverse(),
      removedHooks: 1,
    });
  });

  it('keeps a file init created once the user has added to it', () => {
    const installed = install(undefined).text;
    const edited = installed.replace('{\n', '{\n  "model": "opus",\n');
    expect(uninstall(edited).text).toBe('{\n  "model": "opus"\n}\n');
  });

  it('keeps a deny rule the user had before init', () => {
    const original = pretty({ permissions: { deny: ['Bash(agentbox merge:*)'] } });
    const plan = uninstall(install(original).text);
    expect(plan.text).toBe(original);
    expect(plan.removedDeny).toEqual(
      DENY_RULES.filter((rule) => rule !== 'Bash(agentbox merge:*)').reverse(),
    );
  });

  it('keeps the user’s own hook under the guard’s event, also one added after init', () => {
    const installed = install(pretty({ hooks: { PreToolUse: [userPreHook] } })).text;
    const later = { matcher: 'Write', hooks: [{ type: 'command', command: 'echo later' }] };
    const edited = installed.replace(
      '      }\n    ]\n  },\n  "permissions"',
      `      },\n      ${JSON.stringify(later)}\n    ]\n  },\n  "permissions"`,
    );
    expect(parse(edited).hooks).toEqual({ PreToolUse: [userPreHook, GUARD_GROUP, later] });
    const plan = uninstall(edited);
    expect(parse(plan.text!)).toEqual({ hooks: { PreToolUse: [userPreHook, later] } });
    expect(plan.removedHooks).toBe(1);
  });

  it('removes the record also when the user moved it to the top', () => {
    const moved = `{\n  "agentbox": ${JSON.stringify(freshRecord([]))},\n  "model": "opus"\n}\n`;
    const plan = uninstall(moved);
    expect(plan.text).toBe('{\n  "model": "opus"\n}\n');
    expect(plan.removedDeny).toEqual([]);
  });

  it.each([['{}\n'], [pretty(userSettings)], [pretty({ permissions: { deny: [...DENY_RULES] } })]])(
    'changes nothing in a file agentbox never touched: %j',
    (text) => {
      expect(uninstall(text)).toEqual({ text, changed: false, removedDeny: [], removedHooks: 0 });
    },
  );

  it('removes a guard group even without a record, and no rule', () => {
    const text = pretty({ permissions: { deny: [...DENY_RULES] }, hooks: { PreToolUse: [GUARD_GROUP] } });
    const plan = uninstall(text);
    expect(parse(plan.text!)).toEqual({ permissions: { deny: [...DENY_RULES] }, hooks: { PreToolUse: [] } });
    expect(plan.removedHooks).toBe(1);
    expect(plan.removedDeny).toEqual([]);
  });
});

describe('readRecord', () => {
  it.each<[string, JsonObject, ReturnType<typeof readRecord>]>([
    ['no record', { model: 'x' }, undefined],
    ['a record that is not an object', { agentbox: 'x' }, undefined],
    [
      'an empty record',
      { agentbox: {} },
      { note: NOTE, version: 1, deny: [], guard_events: [], created: [] },
    ],
    [
      'non-string entries',
      { agentbox: { deny: ['Read(x)', 3, null], guard_events: 'PreToolUse', created: ['file', {}] } },
      { note: NOTE, version: 1, deny: ['Read(x)'], guard_events: [], created: ['file'] },
    ],
  ])('%s', (_name, value, expected) => {
    expect(readRecord(value)).toEqual(expected);
  });

  it('every guard entry carries the mark uninstall looks for, and runs only under its condition', () => {
    const hooks = GUARD_GROUP.hooks as JsonObject[];
    expect(hooks.map((h) => h.if)).toEqual([
      'Bash(*.agents*)',
      'Bash(*agentbox merge*)',
      'Bash(*agentbox discard*)',
    ]);
    for (const hook of hooks) expect(hook.command).toMatch(new RegExp(`${GUARD_MARK} v1$`));
  });
});
