/** What the supervisor's model answered, once read. */
export type SupervisorAnswer =
  | { readonly action: 'complete'; readonly text: string }
  | { readonly action: 'abort'; readonly text: string }
  | { readonly action: 'continue'; readonly text: string }
  | { readonly action: 'none' };

const MARKER = /\[(COMPLETE|ABORT|CONTINUE)\]/i;

/**
 * Reads `[COMPLETE] <summary>`, `[ABORT] <reason>` or `[CONTINUE] <text to send>` out of a model's
 * answer, tolerating what models do around it: leading prose, code fences, bold markers, a marker
 * on a later line, trailing whitespace. The first marker wins. The text is everything after it
 * (for CONTINUE: verbatim, all lines, fences removed). A CONTINUE with nothing to send is no
 * decision. Pure.
 */
export function parseAnswer(raw: string): SupervisorAnswer {
  // A fence line goes whole, line end included, and nothing around it does: the other lines of a
  // CONTINUE text, blank ones too, stay as they were (an emptied fence line would add a blank one).
  const cleaned = raw
    .replace(/^[ \t]*```[\w+#.-]*[ \t]*\r?(?:\n|$)/gm, '')
    .replace(/\*\*(\[(?:COMPLETE|ABORT|CONTINUE)\]:?)\*\*/gi, '$1');
  const match = MARKER.exec(cleaned);
  if (!match) return { action: 'none' };
  const text = cleaned
    .slice(match.index + match[0].length)
    .replace(/^[ \t]*:?[ \t]*/, '')
    .trim();
  const action = match[1]!.toLowerCase() as 'complete' | 'abort' | 'continue';
  if (action === 'continue' && text === '') return { action: 'none' };
  return { action, text };
}
