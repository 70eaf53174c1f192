import { isObject, type Json, type JsonObject } from './file.js';

export interface SettingsIssue {
  readonly path: string;
  readonly message: string;
}

type Report = (path: string, message: string) => void;

/**
 * Checks the parts of a settings file that make Claude Code drop the WHOLE file when wrong (one
 * bad hook entry silently disables every hook and deny rule beside it). Not a full schema: it
 * covers hooks and permissions, the parts agentbox writes and depends on. Unknown hook types
 * pass, so a newer Claude Code feature is not reported as an error.
 */
export function validateSettings(value: JsonObject): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  const report: Report = (path, message) => {
    issues.push({ path, message });
  };
  validatePermissions(value.permissions, report);
  for (const [key, child] of Object.entries(value)) {
    if (key !== 'hooks') findMisplacedHooks(child, key, report);
  }
  validateHooks(value.hooks, report);
  return issues;
}

function validatePermissions(permissions: Json | undefined, report: Report): void {
  if (permissions === undefined) return;
  if (!isObject(permissions)) {
    report('permissions', 'must be an object');
    return;
  }
  for (const key of ['allow', 'deny', 'ask'] as const) {
    const list = permissions[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      report(`permissions.${key}`, 'must be an array of rule strings');
      continue;
    }
    for (const [i, rule] of list.entries()) {
      if (typeof rule !== 'string') report(`permissions.${key}[${i}]`, 'must be a string');
    }
  }
}

/**
 * NOTE: Claude Code rejects the whole file when a key named "hooks" appears anywhere but the top
 * level ("hooks are declared outside hooks"), even inside an unrelated object.
 */
function findMisplacedHooks(node: Json, at: string, report: Report): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) findMisplacedHooks(item, `${at}[${i}]`, report);
  } else if (isObject(node)) {
    for (const [key, child] of Object.entries(node)) {
      if (key === 'hooks') report(`${at}.hooks`, 'a "hooks" key is only allowed at the top level');
      findMisplacedHooks(child, `${at}.${key}`, report);
    }
  }
}

function validateHooks(hooks: Json | undefined, report: Report): void {
  if (hooks === undefined) return;
  if (!isObject(hooks)) {
    report('hooks', 'must be an object keyed by event name');
    return;
  }
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      report(`hooks.${event}`, 'must be an array of matcher groups');
      continue;
    }
    for (const [i, group] of groups.entries()) validateGroup(group, `hooks.${event}[${i}]`, report);
  }
}

function validateGroup(group: Json, at: string, report: Report): void {
  if (!isObject(group)) {
    report(at, 'must be an object with "hooks"');
    return;
  }
  if (group.matcher !== undefined && typeof group.matcher !== 'string')
    report(`${at}.matcher`, 'must be a string');
  if (!Array.isArray(group.hooks)) {
    report(`${at}.hooks`, 'must be an array');
    return;
  }
  for (const [j, hook] of group.hooks.entries()) validateHook(hook, `${at}.hooks[${j}]`, report);
}

function validateHook(hook: Json, at: string, report: Report): void {
  if (!isObject(hook)) {
    report(at, 'must be an object');
    return;
  }
  if (hook.timeout !== undefined && (typeof hook.timeout !== 'number' || !(hook.timeout > 0))) {
    report(`${at}.timeout`, `must be a positive number of seconds, got ${JSON.stringify(hook.timeout)}`);
  }
  if (typeof hook.type !== 'string') report(`${at}.type`, 'must be a string such as "command" or "http"');
  else if (hook.type === 'command' && (typeof hook.command !== 'string' || hook.command === '')) {
    report(`${at}.command`, 'must be a non-empty string');
  } else if (hook.type === 'http') validateHttp(hook, at, report);
}

function validateHttp(hook: JsonObject, at: string, report: Report): void {
  const url = hook.url;
  if (typeof url !== 'string') report(`${at}.url`, 'must be a string');
  // NOTE: Claude Code does not expand variables in the url; "${PORT}" fails its validation.
  else if (url.includes('$')) report(`${at}.url`, `cannot contain variables, got ${JSON.stringify(url)}`);
  else if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    report(`${at}.url`, `must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (hook.headers !== undefined) {
    if (!isObject(hook.headers)) report(`${at}.headers`, 'must be an object of strings');
    else
      for (const [name, v] of Object.entries(hook.headers)) {
        if (typeof v !== 'string') report(`${at}.headers.${name}`, 'must be a string');
      }
  }
  const vars = hook.allowedEnvVars;
  if (vars !== undefined && (!Array.isArray(vars) || vars.some((v) => typeof v !== 'string'))) {
    report(`${at}.allowedEnvVars`, 'must be an array of strings');
  }
}
