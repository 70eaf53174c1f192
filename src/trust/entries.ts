import type { PersonConfig } from '../config/load.js';
import { loosenings } from '../config/precedence.js';
import { type ConfigFile, runTimeout } from '../config/schema.js';
import { isObject, type Json, type JsonObject } from '../settings/file.js';
import { GUARD_MARK, MARKER_KEY } from '../settings/guard.js';

/** One thing a repository carries that runs a command or weakens the box: where it is, and its text. */
export interface TrustEntry {
  /** Relative to the repository root: `agentbox.yaml`, `.claude/settings.json`, `.mcp.json`. */
  readonly file: string;
  /** Its place in that file: `runs.notify`, `hooks.SessionStart`, `mcpServers.db`. */
  readonly key: string;
  /** What would run or be allowed, as written. */
  readonly text: string;
  /**
   * What it would loosen: the person's own value (`yours: 2`) or the default they kept (`default:
   * 30m`). Shown, not part of the trust: it changes with the person's file, not the repository's.
   */
  readonly instead?: string;
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * agentbox.yaml's keys that need trust: each value that would loosen the person's setting
 * (config/rules.ts says which way each key loosens). Pure.
 */
export function configEntries(
  fileName: string,
  file: ConfigFile | undefined,
  person: PersonConfig,
): TrustEntry[] {
  return loosenings(person.config, file).map(({ key, value, yours }) => {
    const [section, name] = key.split('.') as [string, string];
    const own = (person.file as Record<string, Record<string, unknown> | null | undefined> | undefined)?.[
      section
    ]?.[name];
    const shown = yours ?? (key === 'runs.timeout' ? runTimeout(person.config) : undefined);
    const instead =
      shown === null || shown === undefined
        ? undefined
        : `${own === null || own === undefined ? 'default' : 'yours'}: ${show(shown)}`;
    return { file: fileName, key, text: show(value), ...(instead ? { instead } : {}) };
  });
}

/** Settings keys that only narrow what a session may do: a repository may carry them unasked. */
const NARROWING_PERMISSIONS = new Set(['deny', 'ask']);

function isOwnHook(hook: Json): boolean {
  return isObject(hook) && typeof hook.command === 'string' && hook.command.includes(GUARD_MARK);
}

function hookEntries(fileName: string, hooks: Json): TrustEntry[] {
  if (!isObject(hooks)) return [{ file: fileName, key: 'hooks', text: show(hooks) }];
  return Object.entries(hooks).flatMap(([event, groups]) => {
    const key = `hooks.${event}`;
    if (!Array.isArray(groups)) return [{ file: fileName, key, text: show(groups) }];
    return groups.flatMap((group) => {
      if (!isObject(group) || !Array.isArray(group.hooks))
        return [{ file: fileName, key, text: show(group) }];
      return group.hooks
        .filter((hook) => !isOwnHook(hook))
        .map((hook) => {
          const body = isObject(hook) ? (hook.command ?? hook.url ?? hook.prompt ?? hook) : hook;
          const matcher = typeof group.matcher === 'string' && group.matcher ? `[${group.matcher}] ` : '';
          return { file: fileName, key, text: `${matcher}${show(body)}` };
        });
    });
  });
}

function permissionEntries(fileName: string, permissions: Json): TrustEntry[] {
  if (!isObject(permissions)) return [{ file: fileName, key: 'permissions', text: show(permissions) }];
  return Object.entries(permissions).flatMap(([name, value]) => {
    if (NARROWING_PERMISSIONS.has(name)) return [];
    const key = `permissions.${name}`;
    if (Array.isArray(value)) return value.map((rule) => ({ file: fileName, key, text: show(rule) }));
    return [{ file: fileName, key, text: show(value) }];
  });
}

/**
 * A Claude Code settings file's entries that need trust: every hook but agentbox's own guard, every
 * permission but deny/ask rules, and every other key (env, helpers such as apiKeyHelper, statusLine,
 * MCP switches, plugins…) except agentbox's own record. Conservative on purpose: a key Claude Code
 * adds tomorrow is asked about, not trusted. Pure.
 */
export function settingsEntries(fileName: string, value: JsonObject): TrustEntry[] {
  return Object.entries(value).flatMap(([key, entry]) => {
    if (key === MARKER_KEY || key === '$schema') return [];
    if (key === 'hooks') return hookEntries(fileName, entry);
    if (key === 'permissions') return permissionEntries(fileName, entry);
    return [{ file: fileName, key, text: show(entry) }];
  });
}

/** `.mcp.json`: every server it declares (and anything else in it). Pure. */
export function mcpEntries(fileName: string, value: JsonObject): TrustEntry[] {
  return Object.entries(value).flatMap(([key, entry]) => {
    if (key === 'mcpServers' && isObject(entry))
      return Object.entries(entry).map(([name, server]) => ({
        file: fileName,
        key: `mcpServers.${name}`,
        text: show(server),
      }));
    return [{ file: fileName, key, text: show(entry) }];
  });
}
