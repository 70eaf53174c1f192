import { Document } from 'yaml';

/**
 * YAML as a person would write it: a comment on top, long lines left whole (a folded `if:` or
 * script line would still parse, but reads badly), scripts as `|` blocks.
 */
export function renderYaml(value: unknown, header?: string): string {
  const doc = new Document(value);
  if (header) doc.commentBefore = header;
  return doc.toString({ lineWidth: 0, blockQuote: 'literal' });
}
