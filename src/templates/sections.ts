import type { Lexer } from 'marked';

/** One heading of a Markdown text and everything under it (its sub-headings included). */
export interface Section {
  readonly depth: number;
  readonly title: string;
  /** The heading line as written. */
  readonly heading: string;
  readonly body: string;
}

/** A heading's title as compared: case, surrounding `#`, spaces and a trailing colon ignored. */
export const sectionKey = (title: string): string =>
  title
    .replace(/^#+\s*/, '')
    .replace(/\s*:?\s*$/, '')
    .trim()
    .toLowerCase();

let lexer: Promise<typeof Lexer> | undefined;

/**
 * marked's lexer, loaded on first use: a run needs it only once claude has answered, and loading
 * it with everything else cost every run ~10 ms before claude could start. A run starts loading
 * it as soon as claude is started (src/run/execute.ts).
 */
export function loadLexer(): Promise<typeof Lexer> {
  lexer ??= import('marked').then((m) => m.Lexer);
  return lexer;
}

/**
 * The sections of a Markdown text, in order, by a real Markdown lexer (a `#` line inside a code
 * fence is no heading), with what comes before the first heading.
 */
export async function splitSections(
  text: string,
): Promise<{ readonly preamble: string; readonly sections: Section[] }> {
  const tokens = new (await loadLexer())().lex(text);
  const sections: Section[] = [];
  let preamble = '';
  const open: { index: number; depth: number; title: string; heading: string; body: string[] }[] = [];
  const closed: { index: number; section: Section }[] = [];
  const close = (depth: number) => {
    while (open.length > 0 && open.at(-1)!.depth >= depth) {
      const s = open.pop()!;
      const section = { depth: s.depth, title: s.title, heading: s.heading, body: s.body.join('').trim() };
      closed.push({ index: s.index, section });
    }
  };
  let index = 0;
  for (const token of tokens) {
    if (token.type === 'heading') {
      const depth = (token as { depth: number }).depth;
      close(depth);
      // Every still-open (shallower) section holds this heading in its body.
      for (const s of open) s.body.push(token.raw);
      open.push({
        index: index++,
        depth,
        title: (token as { text: string }).text,
        heading: token.raw.trim(),
        body: [],
      });
    } else if (open.length === 0) preamble += token.raw;
    else for (const s of open) s.body.push(token.raw);
  }
  close(0);
  // Closing pops the innermost first: back in document order.
  closed.sort((a, b) => a.index - b.index);
  for (const c of closed) sections.push(c.section);
  return { preamble: preamble.trim(), sections };
}

/** The first section with this title (compared by sectionKey). */
export function findSection(sections: readonly Section[], title: string): Section | undefined {
  const key = sectionKey(title);
  return sections.find((s) => sectionKey(s.title) === key);
}
