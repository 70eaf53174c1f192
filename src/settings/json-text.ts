import {
  applyEdits,
  type FormattingOptions,
  findNodeAtLocation,
  type JSONPath,
  modify,
  type Node,
  parseTree,
} from 'jsonc-parser';
import type { Json } from './file.js';

function detectFormatting(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** A text editor that keeps the user's formatting, key order and everything it does not touch. */
export class JsonText {
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
