import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { editConfigText } from '../../src/config/edit.js';

const TEXT = [
  '# agentbox project configuration.',
  'supervisor:',
  '  # Who decides at a stop.',
  '  mode: # rules',
  '  max_iterations: 50 # the default is 50',
  'runs:',
  '  verify:',
  '  # The next one.',
  '  env_pass: # []',
  '',
].join('\n');

describe('editConfigText', () => {
  it('replaces values in place: comments and every other line stay byte for byte', () => {
    const out = editConfigText(TEXT, [
      { section: 'supervisor', key: 'mode', value: 'rules' },
      { section: 'supervisor', key: 'max_iterations', value: 20 },
      { section: 'runs', key: 'verify', value: 'npm test' },
      { section: 'runs', key: 'env_pass', value: ['FOO', 'BAR'] },
    ]);
    expect(out).toBe(
      [
        '# agentbox project configuration.',
        'supervisor:',
        '  # Who decides at a stop.',
        '  mode: rules # rules',
        '  max_iterations: 20 # the default is 50',
        'runs:',
        '  verify: npm test',
        '  # The next one.',
        '  env_pass: [ FOO, BAR ] # []',
        '',
      ].join('\n'),
    );
    expect(parseDocument(out).toJS()).toEqual({
      supervisor: { mode: 'rules', max_iterations: 20 },
      runs: { verify: 'npm test', env_pass: ['FOO', 'BAR'] },
    });
  });

  it('null empties a key and keeps its comment', () => {
    const out = editConfigText(TEXT, [{ section: 'supervisor', key: 'max_iterations', value: null }]);
    expect(out).toContain('\n  max_iterations: # the default is 50\n');
    expect(parseDocument(out).toJS().supervisor.max_iterations).toBeNull();
  });

  it('quotes what YAML would read as another type', () => {
    const out = editConfigText(TEXT, [{ section: 'runs', key: 'verify', value: 'true' }]);
    expect(parseDocument(out).toJS().runs.verify).toBe('true');
  });

  it('adds a key or a section that is not there, keeping the comments', () => {
    const out = editConfigText(TEXT, [
      { section: 'runs', key: 'setup', value: 'npm ci' },
      { section: 'sandbox', key: 'mode', value: 'off' },
    ]);
    const js = parseDocument(out).toJS();
    expect(js.runs.setup).toBe('npm ci');
    expect(js.sandbox).toEqual({ mode: 'off' });
    expect(out).toContain('# Who decides at a stop.');
    expect(out).toContain('# the default is 50');
  });

  it('an empty file gets the keys', () => {
    expect(
      parseDocument(editConfigText('', [{ section: 'supervisor', key: 'mode', value: 'off' }])).toJS(),
    ).toEqual({
      supervisor: { mode: 'off' },
    });
  });
});

describe('a value with a line end (found by a user’s eye: the web UI broke agentbox.yaml with one)', () => {
  it.each([
    ['a string', 'abc\ndef'],
    ['a string that reads as YAML', 'x\nfoo:\n- a'],
    ['a list holding one', ['a\nb', 'c']],
  ])('%s is written on one line and reads back as itself, every other line kept', (_what, value) => {
    const out = editConfigText(TEXT, [{ section: 'supervisor', key: 'mode', value }]);
    expect(out.split('\n')).toHaveLength(TEXT.split('\n').length);
    const back = parseDocument(out);
    expect(back.errors).toEqual([]);
    expect(back.toJS().supervisor.mode).toEqual(value);
    expect(back.toJS().runs).toEqual({ verify: null, env_pass: null });
  });
});
