import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import {
  formatRunName,
  isRunName,
  parseRunName,
  runRefProblem,
  SLUG_MAX,
  slugify,
  validateRunRef,
} from '../../src/ledger/names.js';

describe('slugify', () => {
  it.each([
    ['plain words', 'Fix auth bug', 'fix-auth-bug'],
    ['punctuation and case', 'Why is DB latency HIGH?!', 'why-is-db-latency-high'],
    ['accents are dropped', 'Révise la façade — naïve café', 'revise-la-facade-naive-cafe'],
    ['letters NFKD keeps', 'Straße Æther Øl łódź', 'strasse-aether-ol-lodz'],
    ['scripts with no ASCII form vanish', 'исправить 修复 bug', 'bug'],
    ['apostrophes join the word', "don't break it’s parser", 'dont-break-its-parser'],
    ['double quotes split words', 'fix "login" form', 'fix-login-form'],
    [
      'shell metacharacters',
      'fix "a; rm -rf ~" $(whoami) `id` | tee > /etc/x && echo',
      'fix-a-rm-rf-whoami-id-tee-etc-x',
    ],
    ['path traversal', '../../etc/passwd', 'etc-passwd'],
    ['newlines and tabs', 'line one\n\tline two', 'line-one-line-two'],
    ['emoji', '🚀 ship it 🎉', 'ship-it'],
    ['fullwidth letters', 'ＦＩＸ ｂｕｇ', 'fix-bug'],
    ['digits stay', 'bump node 20 to 22', 'bump-node-20-to-22'],
    ['empty → fallback', '', 'scout'],
    ['only symbols → fallback', '?!… — ***', 'scout'],
    ['only non-latin → fallback', '日本語のタスク', 'scout'],
  ])('%s', (_label, task, expected) => {
    expect(slugify(task, 'scout')).toBe(expected);
  });

  it('cuts long tasks at a word boundary, never past SLUG_MAX', () => {
    const slug = slugify('investigate why the nightly integration suite times out on arm64 runners', 'fix');
    expect(slug).toBe('investigate-why-the-nightly');
    expect(slug.length).toBeLessThanOrEqual(SLUG_MAX);
  });

  it('hard-cuts one giant word instead of falling back', () => {
    expect(slugify('a'.repeat(100), 'fix')).toBe('a'.repeat(SLUG_MAX));
  });

  it.each([
    ['exactly 32 chars', 'abcdefghij klmnopqrst uvwxyzabcd', 'abcdefghij-klmnopqrst-uvwxyzabcd'],
    ['33 chars drop the last word', 'abcdefghij klmnopqrst uvwxyzabcde', 'abcdefghij-klmnopqrst'],
  ])('boundary: %s', (_label, task, expected) => {
    expect(slugify(task, 'fix')).toBe(expected);
  });
});

describe('run names', () => {
  it.each([
    [new Date('2025-11-22T14:30:59.999Z'), 'fix-auth', 'a1b2c3', '25-11-22_1430__fix-auth__a1b2c3'],
    [new Date('2031-01-05T03:07:00Z'), 'scout', '000000', '31-01-05_0307__scout__000000'],
    // UTC, not local time: midnight UTC is still the 1st whatever TZ says.
    [new Date('2026-03-01T00:00:00Z'), 'x', 'ffffff', '26-03-01_0000__x__ffffff'],
  ])('formats %s as %s…', (date, slug, id, expected) => {
    expect(formatRunName(date, slug, id)).toBe(expected);
    expect(parseRunName(expected)).toEqual({
      name: expected,
      stamp: expected.slice(0, 13),
      minute: new Date(Math.floor(date.getTime() / 60_000) * 60_000),
      slug,
      id,
    });
  });

  it('names sort chronologically', () => {
    const dates = [
      '2025-12-31T23:59:00Z',
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:01:00Z',
      '2026-10-02T09:00:00Z',
    ];
    const names = dates.map((d, i) => formatRunName(new Date(d), i % 2 ? 'zzz' : 'aaa', 'abcdef'));
    expect([...names].sort()).toEqual(names);
  });

  it.each([
    ['25-11-22_1430__fix__a1b2c3', true],
    ['25-11-22_1430__fix-auth-bug__a1b2c3', true],
    ['25-11-22_1430__fix__A1B2C3', false],
    ['25-11-22_1430__fix__a1b2c', false],
    ['25-11-22_1430__fix__a1b2c3d', false],
    ['25-11-22_1430__Fix__a1b2c3', false],
    ['25-11-22_1430__fix--x__a1b2c3', false],
    ['25-11-22_1430____a1b2c3', false],
    ['2025-11-22_1430__fix__a1b2c3', false],
    ['25-11-22_1430__fix__a1b2c3.tmp', false],
    ['.25-11-22_1430__fix__a1b2c3', false],
    ['latest', false],
  ])('isRunName(%s) = %s', (name, expected) => {
    expect(isRunName(name)).toBe(expected);
    expect(parseRunName(name) !== null).toBe(expected);
  });
});

describe('run refs', () => {
  it.each([
    ['../x', 'cannot contain "/" or ".."'],
    ['..', 'cannot contain "/" or ".."'],
    ['a/b', 'cannot contain "/" or ".."'],
    ['/etc/passwd', 'cannot contain "/" or ".."'],
    ['C:\\Windows', 'cannot contain "/" or ".."'],
    ['runs\\..\\x', 'cannot contain "/" or ".."'],
    ['x\0y', 'NUL'],
    ['.hidden', 'cannot start with "."'],
    ['.', 'cannot start with "."'],
    ['', 'cannot be empty'],
  ])('refuses %j', (ref, problem) => {
    expect(runRefProblem(ref)).toContain(problem);
    let thrown: unknown;
    try {
      validateRunRef(ref);
    } catch (error) {
      thrown = error;
    }
    expect(isAgentboxError(thrown) && thrown.code).toBe('RUN_NAME_INVALID');
    expect((thrown as Error).message).toBe(
      `invalid run name ${JSON.stringify(ref)}: ${runRefProblem(ref)} — run "agentbox status" to list runs`,
    );
  });

  it.each([
    'latest',
    'last-fail',
    'a1b2c3',
    '25-11-22',
    '25-11-22_1430__fix__a1b2c3',
    'x.y',
    'run name with spaces',
  ])('accepts %j', (ref) => {
    expect(runRefProblem(ref)).toBeNull();
    expect(validateRunRef(ref)).toBe(ref);
  });

  it('quotes control characters and cuts very long refs in the message', () => {
    expect(() => validateRunRef(`\u001b[31m/${'x'.repeat(200)}`)).toThrow(
      /^invalid run name "\\u001b\[31m\/x+…":/,
    );
  });
});
