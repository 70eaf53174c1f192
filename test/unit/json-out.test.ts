import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { terminalJson } from '../../src/util/json-out.js';
import { SRC, sources } from '../helpers/sources.js';

/** What a terminal acts on or hides, and JSON.stringify leaves raw: one of each class. */
const RAW = {
  del: '\u007f',
  c1: '\u0080\u009b\u009d\u009f',
  bidi: '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069',
  separators: '\u2028\u2029',
};
const UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('terminalJson', () => {
  it.each(Object.entries(RAW))('escapes %s as \\uXXXX, and parses back to the same value', (_, chars) => {
    const value = { task: `a${chars}b`, list: [chars] };
    const json = terminalJson(value);
    expect(json).not.toMatch(UNSAFE);
    expect(json).toContain(`a\\u${chars.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('is JSON.stringify for everything else: C0 as it escapes them, é and emoji as they are, indentation', () => {
    const value = { text: 'café 日本 🙂 \x1b[2J\n\t"q" \\', n: 1, none: null };
    expect(terminalJson(value)).toBe(JSON.stringify(value));
    expect(terminalJson(value, 2)).toBe(JSON.stringify(value, null, 2));
    expect(terminalJson(value)).toContain('café 日本 🙂');
  });
});

/**
 * A tripwire (not a boundary): in a file that writes to the terminal (`io.out(` / `io.err(`), a
 * JSON.stringify is allowed only in an error's message (a `throw`, a `new …Error`), which the CLI makes safe before it prints
 * it (src/cli/run.ts). JSON that is printed goes through terminalJson.
 */

/** The JSON.stringify calls of a file outside a `throw` or a `new …Error(…)`, as `file:line`. Pure. */
function printedStringify(rel: string, text: string): string[] {
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node, inError: boolean) => {
    const error =
      inError ||
      ts.isThrowStatement(node) ||
      (ts.isNewExpression(node) && /Error$/.test(node.expression.getText(sf)));
    if (!error && ts.isCallExpression(node) && node.expression.getText(sf) === 'JSON.stringify')
      out.push(`${rel}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`);
    ts.forEachChild(node, (child) => visit(child, error));
  };
  visit(sf, false);
  return out;
}

describe('JSON printed to a terminal', () => {
  it('goes through terminalJson in every file that writes to stdout or stderr', () => {
    const found = sources(SRC).flatMap((file) => {
      const text = fs.readFileSync(file, 'utf8');
      return /\bio\.(out|err)\(/.test(text) ? printedStringify(path.relative(SRC, file), text) : [];
    });
    expect(found, 'print it with terminalJson (src/util/json-out.ts)').toEqual([]);
  });
});
