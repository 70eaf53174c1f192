import { isMap, isNode, isPair, isScalar, parseDocument, stringify } from 'yaml';

/** One setting to write: `section.key = value` (null empties it: back to the default). */
export interface SettingChange {
  readonly section: string;
  readonly key: string;
  readonly value: unknown;
}

/**
 * A value as YAML on one line: scalars as yaml quotes them, lists and maps in flow style. yaml
 * writes a string with a line end over several lines, which in place of one value broke the file
 * (`model: abc`, then `def` at column 0): such a value is written as JSON, which YAML reads as a
 * double-quoted string (or flow collection) on one line.
 */
function inline(value: unknown): string {
  const text = stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trim();
  return text.includes('\n') ? JSON.stringify(value) : text;
}

/**
 * Sets keys in a YAML config text and changes nothing else: a key already there gets its value
 * replaced in place (the comment after it, the lines around it and their order stay byte for
 * byte); a key or section not there yet is added through yaml's Document API. Pure.
 */
export function editConfigText(text: string, changes: readonly SettingChange[]): string {
  let out = text;
  const missing: SettingChange[] = [];
  // Back to front, so the ranges of the changes not yet made stay valid.
  const located: { start: number; end: number; change: SettingChange }[] = [];
  const doc = parseDocument(text);
  for (const change of changes) {
    const section = doc.get(change.section, true);
    const pair = isMap(section)
      ? section.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === change.key)
      : undefined;
    const node = isNode(pair?.value) ? pair.value : null;
    if (!node?.range) {
      missing.push(change);
      continue;
    }
    located.push({ start: node.range[0], end: node.range[1], change });
  }
  for (const { start, end, change } of located.sort((a, b) => b.start - a.start)) {
    const value = change.value === null ? '' : inline(change.value);
    const before = out.slice(0, start);
    // Emptied, `key: 50 # note` becomes `key: # note`, not `key:  # note`.
    const after =
      value === '' && before.endsWith(' ') && out[end] === ' ' ? out.slice(end + 1) : out.slice(end);
    const lead = value !== '' && before.endsWith(':') ? ' ' : '';
    const trail = value !== '' && after.startsWith('#') ? ' ' : '';
    out = `${before}${lead}${value}${trail}${after}`;
  }
  if (missing.length === 0) return out;
  const rest = parseDocument(out);
  for (const change of missing) rest.setIn([change.section, change.key], change.value);
  return rest.toString();
}
