import matter from 'gray-matter';
import { describe, expect, it } from 'vitest';
import { splitFrontMatter } from '../../src/templates/front-matter.js';

// gray-matter (what agentbox used before) is the oracle: the same files give the same parts.
describe('splitFrontMatter reads front matter as gray-matter did', () => {
  it.each([
    ['no front matter', 'just text\n--- later\n'],
    ['empty file', ''],
    ['a mapping', '---\ndescription: Scout\nrequired_sections: [Answer, Evidence]\n---\n# Body\ntext\n'],
    ['CRLF line ends', '---\r\ndescription: x\r\n---\r\nbody\r\n'],
    ['a BOM', '\ufeff---\na: 1\n---\nbody'],
    ['four dashes: no front matter', '----\na: 1\n----\nbody'],
    ['only comments: an empty mapping', '---\n# a comment\n---\nbody'],
    ['an empty block', '---\n---\nbody'],
    ['no closing line: all of it is front matter', '---\na: 1\nb: 2\n'],
    ['a language after the dashes', '---yaml\na: 1\n---\nbody'],
    ['json', '---json\n{"a": [1, 2]}\n---\nbody'],
    ['the close is any line that begins with ---', '---\na: 1\n--- trailing\nbody'],
    ['a body that starts with blank lines keeps all but one', '---\na: 1\n---\n\n\nbody'],
    ['a list', '---\n- a\n- b\n---\nx'],
    ['a scalar', '---\njust words\n---\nx'],
    [
      'nested values',
      '---\nactions:\n  missing_section: fail\n  direct_execution: warn\nlimit: 3\nflag: true\n---\n',
    ],
  ])('%s', (_, text) => {
    const expected = matter(text, {});
    expect(splitFrontMatter(text)).toEqual({ data: expected.data, content: expected.content });
  });

  it.each([
    ['invalid YAML', '---\nrequired_sections: [a\n---\nx'],
    ['duplicate keys', '---\na: 1\na: 2\n---\nx'],
    ['invalid JSON', '---json\n{a}\n---\nx'],
  ])('%s throws, as it did', (_, text) => {
    expect(() => matter(text, {})).toThrow();
    expect(() => splitFrontMatter(text)).toThrow();
  });

  it('runs no code: a javascript block is refused (gray-matter evaluated it)', () => {
    expect(() => splitFrontMatter('---js\n{ a: process.exit(3) }\n---\nx')).toThrow(/only YAML/);
  });
});
