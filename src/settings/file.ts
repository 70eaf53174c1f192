import { createRequire } from 'node:module';
import path from 'node:path';
import type * as JsoncParser from 'jsonc-parser';
import { AgentboxError } from '../errors.js';
import { readRepoText } from '../util/fs.js';

export type SettingsScope = 'shared' | 'local';

export const SETTINGS_FILES: Record<SettingsScope, string> = {
  shared: '.claude/settings.json',
  local: '.claude/settings.local.json',
};

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SettingsFile {
  readonly path: string;
  /** The file's text; undefined when the file does not exist. */
  readonly text: string | undefined;
  readonly value: JsonObject;
}

export function settingsPath(root: string, scope: SettingsScope): string {
  return path.join(root, SETTINGS_FILES[scope]);
}

/**
 * The file's JSON value, strictly: comments, trailing commas and empty files are errors, said
 * with jsonc-parser's reason, line and column.
 * NOTE: JSON.parse first (anything it accepts jsonc-parser accepts as well): jsonc-parser is
 * loaded only for a file JSON.parse refuses. A run reads the project's settings before claude
 * starts, and loading it there cost every run ~9 ms.
 */
function parseStrict(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Said precisely below (or accepted: a byte order mark, whitespace JSON.parse does not know).
  }
  const jsonc = createRequire(import.meta.url)('jsonc-parser') as typeof JsoncParser;
  const errors: JsoncParser.ParseError[] = [];
  const value = jsonc.parse(text, errors, {
    disallowComments: true,
    allowTrailingComma: false,
    allowEmptyContent: false,
  });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineColumn(text, first.offset);
    throw new AgentboxError(
      'SETTINGS_INVALID_JSON',
      `${file} is not valid JSON: ${jsonc.printParseErrorCode(first.error)} at line ${line}, column ${column} (offset ${first.offset})`,
      {
        hint: 'fix the JSON by hand (Claude Code ignores the whole file while it is invalid), then run the command again',
      },
    );
  }
  return value;
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/**
 * Reads a Claude Code settings file of a repository (`<root>/.claude/settings*.json`, never through
 * a link out of the repository: readRepoText) strictly: Claude Code itself rejects comments and
 * trailing commas (and then ignores the whole file), so agentbox does too, and says where.
 */
export function readSettings(file: string): SettingsFile {
  const text = readRepoText(file, path.dirname(path.dirname(file)));
  if (text === undefined) return { path: file, text: undefined, value: {} };
  const value = parseStrict(text, file);
  const problem = shapeProblem(value);
  if (problem) {
    throw new AgentboxError('SETTINGS_BAD_SHAPE', `${file}: ${problem}`, {
      hint: 'fix that entry by hand: agentbox only merges into the shape Claude Code documents, and changed nothing',
    });
  }
  return { path: file, text, value: value as JsonObject };
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'object' || typeof v === 'undefined'
        ? `an ${typeof v}`
        : `a ${typeof v}`;

/** The first way the file's shape differs from what agentbox merges into, or undefined. */
export function shapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return `the top level should be a JSON object, got ${kind(value)}`;
  const { hooks, permissions } = value;
  if (hooks !== undefined) {
    if (!isObject(hooks)) return `"hooks" should be an object keyed by event name, got ${kind(hooks)}`;
    for (const [event, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups))
        return `"hooks.${event}" should be an array of matcher groups, got ${kind(groups)}`;
      for (const [i, group] of groups.entries()) {
        if (!isObject(group)) return `"hooks.${event}[${i}]" should be an object, got ${kind(group)}`;
        if (!Array.isArray(group.hooks))
          return `"hooks.${event}[${i}].hooks" should be an array, got ${kind(group.hooks)}`;
      }
    }
  }
  if (permissions !== undefined) {
    if (!isObject(permissions)) return `"permissions" should be an object, got ${kind(permissions)}`;
    const deny = permissions.deny;
    if (deny !== undefined && !Array.isArray(deny))
      return `"permissions.deny" should be an array, got ${kind(deny)}`;
  }
  const marker = value.agentbox;
  if (marker !== undefined && !isObject(marker))
    return `"agentbox" should be the object agentbox init wrote, got ${kind(marker)}`;
  return undefined;
}

export { isObject };
