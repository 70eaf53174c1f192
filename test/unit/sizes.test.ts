import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The house (issue 16): rooms of a size a person can hold (STYLE.md). No file in src/ is longer
 * than 300 lines and no function longer than 60, unless the file says why in one comment of the
 * form `// size: <why>`. The median file length is printed (the goal is ≤ 80).
 */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');
/** The web page's own modules (web/*.js), held to the same sizes. */
const WEB = path.resolve(SRC, '..', 'web');
const MAX_FILE = 300;
const MAX_FUNCTION = 60;

/** An exception a file states for itself: one line, a reason after the colon. */
const EXCEPTION = /^\s*\/\/ size: \S/m;

function sources(dir: string, ext = '.ts'): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full, ext) : e.name.endsWith(ext) ? [full] : [];
  });
}

/** Lines as `wc -l` counts them (a final newline ends the last line, it does not start one). */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Every function, method, accessor and arrow with a body, with its length in lines. Pure. */
function functionLengths(rel: string, text: string): { name: string; lines: number }[] {
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const out: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ name: `${rel}:${first + 1} ${nameOf(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function nameOf(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named && ts.isIdentifier(named)) return named.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  )
    if (ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** What in one source file is too long (empty when it fits or says why it does not). Pure. */
function sizeProblems(rel: string, text: string): string[] {
  if (EXCEPTION.test(text)) return [];
  const out: string[] = [];
  const lines = lineCount(text);
  if (lines > MAX_FILE) out.push(`${rel} has ${lines} lines (> ${MAX_FILE})`);
  for (const f of functionLengths(rel, text))
    if (f.lines > MAX_FUNCTION) out.push(`${f.name} has ${f.lines} lines (> ${MAX_FUNCTION})`);
  return out;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

describe('sizes: rooms a person can hold (issue 16)', () => {
  const files = sources(SRC).map((file) => ({
    rel: path.relative(SRC, file).split(path.sep).join('/'),
    text: fs.readFileSync(file, 'utf8'),
  }));
  const page = sources(WEB, '.js').map((file) => ({
    rel: `web/${path.relative(WEB, file).split(path.sep).join('/')}`,
    text: fs.readFileSync(file, 'utf8'),
  }));

  it(`no file over ${MAX_FILE} lines, no function over ${MAX_FUNCTION}, unless it says why`, () => {
    const problems = files.flatMap((f) => sizeProblems(f.rel, f.text));
    console.log(
      `median src file: ${median(files.map((f) => lineCount(f.text)))} lines over ${files.length} files`,
    );
    expect(problems).toEqual([]);
  });

  it(`the web page's modules (web/*.js): the same sizes`, () => {
    expect(page.length).toBeGreaterThan(10);
    expect(page.flatMap((f) => sizeProblems(f.rel, f.text))).toEqual([]);
  });

  it('the check finds a long file and a long function, and honours a stated exception', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const longFn = `export function big() {\n${body(59)}\n}\n`;
    const longArrow = `const big = () => {\n${body(59)}\n};\n`;
    const method = `class A {\n  m() {\n${body(59)}\n  }\n}\n`;
    expect(sizeProblems('x.ts', longFn)).toEqual(['x.ts:1 big has 61 lines (> 60)']);
    expect(sizeProblems('x.ts', longArrow)).toEqual(['x.ts:1 big has 61 lines (> 60)']);
    expect(sizeProblems('x.ts', method)).toEqual(['x.ts:2 m has 61 lines (> 60)']);
    expect(sizeProblems('x.ts', `export function ok() {\n${body(58)}\n}\n`)).toEqual([]);
    expect(sizeProblems('x.ts', `${'// line\n'.repeat(301)}`)).toEqual(['x.ts has 301 lines (> 300)']);
    expect(sizeProblems('x.ts', `// size: one table read top to bottom\n${longFn}`)).toEqual([]);
    expect(sizeProblems('x.ts', `// size:\n${longFn}`)).toHaveLength(1);
  });
});
