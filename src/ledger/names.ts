import { AgentboxError } from '../errors.js';

/**
 * Run names: `YY-MM-DD_HHmm__<slug>__<id>`, UTC. Sorting names sorts runs by start minute, a
 * person can read them, and the 6-hex id at the end names the run's slash commands.
 */

export const SLUG_MAX = 32;
export const RUN_ID_RE = /^[0-9a-f]{6}$/;
const RUN_NAME_RE = /^(\d{2})-(\d{2})-(\d{2})_(\d{2})(\d{2})__([a-z0-9]+(?:-[a-z0-9]+)*)__([0-9a-f]{6})$/;
/** `YY-MM-DD_HHmm`: the sortable prefix every run name starts with. */
export const STAMP_LENGTH = 13;

// Letters NFKD does not decompose into ASCII.
const TRANSLITERATE: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ı: 'i',
  ŋ: 'n',
};

/**
 * The task as a short file-name-safe slug: lowercase ASCII words joined by `-`, cut at a word
 * boundary to at most SLUG_MAX characters. Accents are dropped (é → e), letters with no ASCII
 * form are dropped, and an empty result becomes `fallback` (the run type).
 */
export function slugify(text: string, fallback: string): string {
  const ascii = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[ßæœøđðþłıŋ]/g, (c) => TRANSLITERATE[c] ?? '')
    // "don't" reads better as "dont" than as "don-t".
    .replace(/['’‘`]/g, '');
  let slug = '';
  for (const word of ascii.split(/[^a-z0-9]+/)) {
    if (!word) continue;
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > SLUG_MAX) {
      // One giant word: a hard cut is better than an empty slug.
      if (!slug) slug = word.slice(0, SLUG_MAX);
      break;
    }
    slug = next;
  }
  return slug || fallback;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

export function formatStamp(date: Date): string {
  return (
    `${pad2(date.getUTCFullYear() % 100)}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}_` +
    `${pad2(date.getUTCHours())}${pad2(date.getUTCMinutes())}`
  );
}

export function formatRunName(date: Date, slug: string, id: string): string {
  return `${formatStamp(date)}__${slug}__${id}`;
}

export interface ParsedRunName {
  readonly name: string;
  /** `YY-MM-DD_HHmm` */
  readonly stamp: string;
  /** The start minute (UTC); names before 2000 or after 2099 do not exist. */
  readonly minute: Date;
  readonly slug: string;
  readonly id: string;
}

/** The parts of a run name, or null when `name` is not one (temp files, stray folders). */
export function parseRunName(name: string): ParsedRunName | null {
  const m = RUN_NAME_RE.exec(name);
  if (!m) return null;
  const [, yy, mo, dd, hh, mi, slug, id] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const minute = new Date(Date.UTC(2000 + Number(yy), Number(mo) - 1, Number(dd), Number(hh), Number(mi)));
  return { name, stamp: name.slice(0, STAMP_LENGTH), minute, slug, id };
}

export function isRunName(name: string): boolean {
  return RUN_NAME_RE.test(name);
}

/** The short id at the end of a run name (no validation: call on names from parseRunName). */
export function runIdOf(name: string): string {
  return name.slice(-6);
}

/**
 * Why `ref` can never name a run, or null. A ref becomes a path under runs/, so anything that
 * could step outside that folder is refused before the file system sees it.
 */
export function runRefProblem(ref: string): string | null {
  if (ref === '') return 'a run name cannot be empty';
  if (ref.includes('\0')) return 'a run name cannot contain a NUL byte';
  if (ref.includes('/') || ref.includes('\\') || ref.includes('..')) {
    return 'a run name cannot contain "/" or ".."';
  }
  if (ref.startsWith('.')) return 'a run name cannot start with "."';
  return null;
}

/** The ref quoted for an error message: control characters escaped, very long refs cut. */
export function quoteRef(ref: string): string {
  return JSON.stringify(ref.length > 80 ? `${ref.slice(0, 79)}…` : ref);
}

export function validateRunRef(ref: string): string {
  const problem = runRefProblem(ref);
  if (problem) {
    throw new AgentboxError(
      'RUN_NAME_INVALID',
      `invalid run name ${quoteRef(ref)}: ${problem} — run "agentbox status" to list runs`,
    );
  }
  return ref;
}
