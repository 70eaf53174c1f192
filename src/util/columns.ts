/** How many terminal columns a text takes. */
export type Measure = (text: string) => number;

/**
 * Text whose width is its length: printable ASCII, the precomposed Latin letters of most European
 * tasks (Latin-1 but its soft hyphen and the © ® that string-width draws as emoji, Latin Extended-A), and the dash and ellipsis agentbox prints
 * itself. One column each, as string-width counts them (a unit test checks every one).
 */
export const PLAIN_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x20, 0x7e],
  [0xa0, 0xa8],
  [0xaa, 0xac],
  [0xaf, 0x17f],
  [0x2014, 0x2014],
  [0x2026, 0x2026],
];
const PLAIN = /^[\x20-\x7e\u00a0-\u00a8\u00aa-\u00ac\u00af-\u017f\u2014\u2026]*$/;

export function isPlain(text: string): boolean {
  return PLAIN.test(text);
}

/** The measure for plain text; anything else is a bug (it should have gone through measureFor). */
export const plainMeasure: Measure = (text) => {
  if (!PLAIN.test(text)) {
    throw new Error(`columns: measureFor() was not shown ${JSON.stringify(text)} (this is a bug)`);
  }
  return text.length;
};

/**
 * A measure for these texts. string-width is loaded only when one of them needs it: loading it
 * costs ~16 ms (its Intl.Segmenter), a sixth of `agentbox status`'s whole budget, for a table that
 * is almost always ASCII.
 */
export async function measureFor(texts: Iterable<string>): Promise<Measure> {
  for (const text of texts) {
    if (!PLAIN.test(text)) {
      const { default: stringWidth } = await import('string-width');
      return (t) => (PLAIN.test(t) ? t.length : stringWidth(t));
    }
  }
  return plainMeasure;
}

/** `text` cut to at most `width` columns (wide characters count two), `…` marking a cut. */
export function fitColumns(text: string, width: number, measure: Measure = plainMeasure): string {
  if (width === Number.POSITIVE_INFINITY || measure(text) <= width) return text;
  if (PLAIN.test(text)) return `${text.slice(0, Math.max(0, width - 1)).trimEnd()}…`;
  let out = '';
  let used = 0;
  for (const { segment } of new Intl.Segmenter().segment(text)) {
    const w = measure(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out.trimEnd()}…`;
}
