import { parse } from 'yaml';

/** A template's front matter (the block between the two `---` lines at its top), parsed, and the rest. */
export interface FrontMatter {
  readonly data: unknown;
  readonly content: string;
}

const OPEN = '---';
const CLOSE = '\n---';

/**
 * Splits a file into its front matter and its content by gray-matter's rules, which agentbox used
 * before (it brought a second YAML parser and esprima: ~20 ms of every run's start): a BOM is
 * dropped; the file starts with `---` not followed by a fourth `-`, then an optional language
 * (`yaml`, the default, or `json`); the block ends at the next line that begins with `---`, else
 * at the end of the file; one line break after it is not content. A block of nothing but comments
 * is an empty mapping. Invalid YAML or JSON, or another language, throws. Pure.
 */
export function splitFrontMatter(file: string): FrontMatter {
  const text = file.charCodeAt(0) === 0xfeff ? file.slice(1) : file;
  if (!text.startsWith(OPEN) || text.charAt(OPEN.length) === '-') return { data: {}, content: text };
  const rest = text.slice(OPEN.length);
  const lineEnd = rest.search(/\r?\n/);
  const language = (lineEnd === -1 ? rest : rest.slice(0, lineEnd)).trim();
  const after = lineEnd === -1 ? '' : rest.slice(lineEnd);
  const close = after.indexOf(CLOSE);
  // NOTE: the close is found by its \n: with CRLF line ends the block ends in a \r, which this
  // YAML parser would keep in the last value (js-yaml, gray-matter's, read it as a line end).
  const block = (close === -1 ? after : after.slice(0, close)).replace(/\r$/, '');
  const content = close === -1 ? '' : after.slice(close + CLOSE.length).replace(/^\r?\n?/, '');
  if (block.replace(/^\s*#[^\n]+/gm, '').trim() === '') return { data: {}, content };
  return { data: parseBlock(language, block), content };
}

function parseBlock(language: string, block: string): unknown {
  if (language === '' || language === 'yaml' || language === 'yml') return parse(block);
  if (language === 'json') return JSON.parse(block);
  throw new Error(`front matter in "${language}": only YAML (or JSON) is read`);
}
