import { isObject, type Json, type JsonObject } from './file.js';
import { DENY_RULES, GUARD_EVENT, GUARD_GROUP, GUARD_MARK, MARKER_KEY } from './guard.js';
import { JsonText } from './json-text.js';

export {
  DENY_RULES,
  GUARD_COMMAND,
  GUARD_CONDITIONS,
  GUARD_EVENT,
  GUARD_GROUP,
  GUARD_MARK,
  MARKER_KEY,
} from './guard.js';

export interface InstallRecord {
  note: string;
  version: 1;
  deny: string[];
  /**
   * Events where init added the guard. NOTE: not called "hooks": Claude Code rejects the whole
   * file when it finds a "hooks" key anywhere but the top level.
   */
  guard_events: string[];
  /** Containers init created ("file", "hooks", "hooks.PreToolUse", "permissions", "permissions.deny"). */
  created: string[];
}

const NOTE = 'written by agentbox init; agentbox uninstall removes exactly the entries listed here';

function isGuardGroup(group: Json): boolean {
  if (!isObject(group) || !Array.isArray(group.hooks)) return false;
  return group.hooks.some(
    (h) => isObject(h) && typeof h.command === 'string' && h.command.includes(GUARD_MARK),
  );
}

export function readRecord(value: JsonObject): InstallRecord | undefined {
  const raw = value[MARKER_KEY];
  if (!isObject(raw)) return undefined;
  const strings = (v: Json | undefined) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  return {
    note: NOTE,
    version: 1,
    deny: strings(raw.deny),
    guard_events: strings(raw.guard_events),
    created: strings(raw.created),
  };
}

export interface InstallPlan {
  readonly text: string;
  readonly changed: boolean;
  readonly addedDeny: readonly string[];
  readonly addedHooks: readonly string[];
}

/** What the settings file looks like with agentbox's entries merged in. Pure. */
export function planInstall(text: string | undefined, value: JsonObject): InstallPlan {
  const doc = new JsonText(text ?? '{}\n');
  const previous = readRecord(value);
  const record: InstallRecord = previous ?? {
    note: NOTE,
    version: 1,
    deny: [],
    guard_events: [],
    created: [],
  };
  const created = new Set(record.created);
  if (text === undefined) created.add('file');

  const permissions = isObject(value.permissions) ? value.permissions : undefined;
  const deny = Array.isArray(permissions?.deny) ? permissions.deny : undefined;
  if (!permissions) created.add('permissions');
  if (!deny) created.add('permissions.deny');
  const addedDeny = DENY_RULES.filter((rule) => !deny?.includes(rule));
  if (addedDeny.length > 0) {
    if (!permissions) doc.set(['permissions'], { deny: [...addedDeny] });
    else if (!deny) doc.set(['permissions', 'deny'], [...addedDeny]);
    else for (const rule of addedDeny) doc.append(['permissions', 'deny'], rule);
  }

  const hooks = isObject(value.hooks) ? value.hooks : undefined;
  const groups = Array.isArray(hooks?.[GUARD_EVENT]) ? (hooks[GUARD_EVENT] as Json[]) : undefined;
  const addedHooks: string[] = [];
  if (!groups?.some(isGuardGroup)) {
    addedHooks.push(GUARD_EVENT);
    if (!hooks) {
      created.add('hooks');
      created.add(`hooks.${GUARD_EVENT}`);
      doc.set(['hooks'], { [GUARD_EVENT]: [GUARD_GROUP] });
    } else if (!groups) {
      created.add(`hooks.${GUARD_EVENT}`);
      doc.set(['hooks', GUARD_EVENT], [GUARD_GROUP]);
    } else {
      doc.append(['hooks', GUARD_EVENT], GUARD_GROUP);
    }
  }

  const next: InstallRecord = {
    note: NOTE,
    version: 1,
    deny: union(record.deny, addedDeny),
    guard_events: union(record.guard_events, addedHooks),
    // Only containers that did not exist before the first init count as created.
    created: previous ? record.created : [...created],
  };
  if (!previous || JSON.stringify(previous) !== JSON.stringify(next))
    doc.set([MARKER_KEY], next as unknown as Json);
  return { text: doc.text, changed: doc.text !== (text ?? ''), addedDeny, addedHooks };
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

export interface UninstallPlan {
  /** The new text, or null when init created the file and nothing of the user's is left in it. */
  readonly text: string | null;
  readonly changed: boolean;
  readonly removedDeny: readonly string[];
  readonly removedHooks: number;
}

/** The settings file with exactly what init added taken out again. Pure. */
export function planUninstall(text: string, value: JsonObject): UninstallPlan {
  const record = readRecord(value);
  const doc = new JsonText(text);
  let removedHooks = 0;
  const hooks = isObject(value.hooks) ? value.hooks : {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    // Remove from the end so earlier indexes stay valid.
    for (let i = groups.length - 1; i >= 0; i--) {
      if (isGuardGroup(groups[i]!)) {
        doc.removeElement(['hooks', event], i);
        removedHooks++;
      }
    }
  }
  const removedDeny: string[] = [];
  const permissions = isObject(value.permissions) ? value.permissions : {};
  const deny = Array.isArray(permissions.deny) ? permissions.deny : [];
  for (let i = deny.length - 1; i >= 0; i--) {
    const rule = deny[i];
    if (typeof rule === 'string' && record?.deny.includes(rule)) {
      doc.removeElement(['permissions', 'deny'], i);
      removedDeny.push(rule);
    }
  }
  if (record) doc.set([MARKER_KEY], undefined);
  pruneCreated(doc, record?.created ?? []);
  const changed = doc.text !== text;
  const left = JSON.parse(doc.text) as JsonObject;
  const deleteFile = record?.created.includes('file') === true && Object.keys(left).length === 0;
  return { text: deleteFile ? null : doc.text, changed: changed || deleteFile, removedDeny, removedHooks };
}

/** Removes containers init created, deepest first, if they are empty now. */
function pruneCreated(doc: JsonText, created: readonly string[]): void {
  const paths = created.filter((c) => c !== 'file').sort((a, b) => b.split('.').length - a.split('.').length);
  for (const dotted of paths) {
    const path = dotted.split('.');
    let node: Json | undefined = JSON.parse(doc.text) as Json;
    for (const key of path) node = isObject(node) ? node[key] : undefined;
    const empty = Array.isArray(node) ? node.length === 0 : isObject(node) && Object.keys(node).length === 0;
    if (empty) doc.set(path, undefined);
  }
}
