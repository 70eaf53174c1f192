import {
  applyEdits,
  type FormattingOptions,
  findNodeAtLocation,
  type JSONPath,
  modify,
  type Node,
  parseTree,
} from 'jsonc-parser';
import { isObject, type Json, type JsonObject } from './file.js';

/** The top-level key where init records what it added, so uninstall removes exactly that. */
export const MARKER_KEY = 'agentbox';
export const GUARD_MARK = '# agentbox-guard';

/**
 * Repo-wide rules for every Claude session in this repository, inside a run or not: the ledger
 * is not the agent's to read (self-poisoning), and the human gate is not the agent's to use.
 */
export const DENY_RULES = [
  'Read(./.agents/**)',
  'Bash(agentbox merge:*)',
  'Bash(agentbox discard:*)',
  'Bash(npx agentbox merge:*)',
  'Bash(npx agentbox discard:*)',
] as const;

const GUARD_REASON =
  'agentbox: the .agents/ run ledger and agentbox merge/discard are for humans only; an agent may not use them';

/**
 * Backs the deny rules where Claude Code's own command parsing does not reach (`bash -c "cat …"`,
 * `python3 -c …`). Plain POSIX sh: it runs only for Bash commands that name the ledger or the gate
 * (GUARD_CONDITIONS), prints nothing unless it denies, and needs no agentbox installation, so it
 * is harmless for teammates who never run agentbox.
 */
export const GUARD_COMMAND =
  'case "$(cat)" in *.agents/runs*|*.agents/INDEX*|*.agents/pointers*|*.agents/latest*|*"agentbox merge"*|*"agentbox discard"*) ' +
  `printf '%s\\n' '${JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: GUARD_REASON,
    },
  })}';; esac ${GUARD_MARK} v1`;

/**
 * NOTE: each entry runs only when its `if` matches the command (checked inside Claude Code, no
 * process started): the guard costs nothing on the Bash calls that do not name the ledger or the
 * gate (measured with bench/hooks.bench.ts). A Claude Code that does not know `if` runs the guard on
 * every Bash call instead: slower, equally safe.
 */
export const GUARD_CONDITIONS = [
  'Bash(*.agents*)',
  'Bash(*agentbox merge*)',
  'Bash(*agentbox discard*)',
] as const;
export const GUARD_GROUP: JsonObject = {
  matcher: 'Bash',
  hooks: GUARD_CONDITIONS.map((condition) => ({
    type: 'command',
    if: condition,
    command: GUARD_COMMAND,
    timeout: 10,
  })),
};
export const GUARD_EVENT = 'PreToolUse';

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

function detectFormatting(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** A text editor that keeps the user's formatting, key order and everything it does not touch. */
class JsonText {
  text: string;
  private readonly formatting: FormattingOptions;

  constructor(text: string) {
    this.text = text;
    this.formatting = detectFormatting(text);
  }

  /**
   * Adds a property, removes one, or replaces a value in place. Adding and removing go through
   * insert() and cut(), which are exact inverses; only a replaced value is formatted by
   * jsonc-parser (the range it formats is the new value alone).
   */
  set(path: JSONPath, value: Json | undefined): void {
    const tree = parseTree(this.text);
    const parent = tree ? findNodeAtLocation(tree, path.slice(0, -1)) : undefined;
    const key = path.at(-1);
    if (parent?.type === 'object' && typeof key === 'string') {
      const index = (parent.children ?? []).findIndex((p) => p.children?.[0]?.value === key);
      if (value === undefined) {
        if (index >= 0) this.cut(parent, index);
        return;
      }
      if (index < 0) {
        this.insert(parent, `${JSON.stringify(key)}: `, value);
        return;
      }
    }
    const options = value === undefined ? {} : { formattingOptions: this.formatting };
    this.text = applyEdits(this.text, modify(this.text, path, value, options));
  }

  /** Removes one array element and its separator, the exact inverse of append(). */
  removeElement(path: JSONPath, index: number): void {
    const tree = parseTree(this.text);
    const array = tree ? findNodeAtLocation(tree, path) : undefined;
    if (array?.type === 'array') this.cut(array, index);
  }

  append(path: JSONPath, value: Json): void {
    const tree = parseTree(this.text);
    const array = tree ? findNodeAtLocation(tree, path) : undefined;
    if (array?.type === 'array') this.insert(array, '', value);
  }

  /**
   * Adds a member after the container's last one, in the container's own layout: on its own line
   * at the same indent, or inline when the container is inline. An empty container opens onto its
   * own lines, and cut() closes it again to `{}` or `[]`. NOTE: jsonc-parser's modify() reformats
   * every line an edit touches, which would rewrite the user's entries (an inline
   * `"deny": ["Read(./.env)"]` or one-line hook group before the insertion point), and leaves an
   * emptied object as `{\n}`; then uninstall could not give back the original bytes.
   */
  private insert(container: Node, prefix: string, value: Json): void {
    const eol = this.formatting.eol ?? '\n';
    const unit = this.formatting.insertSpaces ? ' '.repeat(this.formatting.tabSize ?? 2) : '\t';
    const block = (indent: string) => JSON.stringify(value, null, unit).split('\n').join(`${eol}${indent}`);
    const last = container.children?.at(-1);
    if (!last) {
      const lineStart = this.text.lastIndexOf('\n', container.offset) + 1;
      const indent = /^[ \t]*/.exec(this.text.slice(lineStart))![0];
      const body = `${eol}${indent}${unit}${prefix}${block(indent + unit)}${eol}${indent}`;
      this.splice(container.offset + 1, container.length - 2, body);
      return;
    }
    const lineStart = this.text.lastIndexOf('\n', last.offset) + 1;
    const indent = this.text.slice(lineStart, last.offset);
    const end = last.offset + last.length;
    const ownLine = /^[ \t]*$/.test(indent) && lineStart > container.offset;
    this.splice(
      end,
      0,
      ownLine ? `,${eol}${indent}${prefix}${block(indent)}` : `, ${prefix}${JSON.stringify(value)}`,
    );
  }

  /** Removes one member (array element or object property) and its separator; inverse of insert(). */
  private cut(container: Node, index: number): void {
    const items = container.children ?? [];
    const item = items[index];
    if (!item) return;
    const prev = items[index - 1];
    const next = items[index + 1];
    let [from, to] = [item.offset, item.offset + item.length];
    if (prev) from = prev.offset + prev.length;
    else if (next) to = next.offset;
    else [from, to] = [container.offset + 1, container.offset + container.length - 1];
    this.splice(from, to - from, '');
  }

  private splice(offset: number, length: number, content: string): void {
    this.text = `${this.text.slice(0, offset)}${content}${this.text.slice(offset + length)}`;
  }
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
