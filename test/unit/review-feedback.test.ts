import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clearKeptReview, collectReview, REVIEW_FILE } from '../../src/review/feedback/collect.js';
import { type LineComment, parseCommentArgs, parsePlace } from '../../src/review/feedback/comments.js';
import { hunkAt, parseHunks } from '../../src/review/feedback/hunks.js';
import { placeProblem } from '../../src/review/feedback/places.js';
import { renderReview } from '../../src/review/feedback/render.js';
import { parseReviewFile, reopenedReview, writeReviewFile } from '../../src/review/feedback/review-file.js';
import { loadReviseTemplate, revisionMessage } from '../../src/templates/revise.js';
import { tempDir } from '../helpers/git-repo.js';

const PATCH = [
  'diff --git a/src/app.ts b/src/app.ts',
  'index 1111111..2222222 100644',
  '--- a/src/app.ts',
  '+++ b/src/app.ts',
  '@@ -1,4 +1,5 @@',
  ' export const a = 1;',
  '-export const x = 1;',
  '+export const x = 42;',
  '+export const y = x + 1;',
  ' export const b = 2;',
  ' export const c = 3;',
  'diff --git a/notes.txt b/notes.txt',
  'new file mode 100644',
  'index 0000000..3333333',
  '--- /dev/null',
  '+++ b/notes.txt',
  '@@ -0,0 +1,2 @@',
  '+one',
  '+two with ``` fences',
  '',
].join('\n');

describe('--comment <file>:<line> "<text>"', () => {
  it.each([
    [['src/app.ts:2', 'rename x'], [{ file: 'src/app.ts', line: 2, text: 'rename x' }]],
    [['./a:b.txt:10', ' spaced '], [{ file: 'a:b.txt', line: 10, text: 'spaced' }]],
    [
      ['src/app.ts:-2', 'why remove it?'],
      [{ file: 'src/app.ts', line: 2, side: 'old', text: 'why remove it?' }],
    ],
    [['src/app.ts:+3', 'the new side'], [{ file: 'src/app.ts', line: 3, text: 'the new side' }]],
    // A path with `..` that stays inside the repository is the file it names (it was refused).
    [['src/../app.ts:1', 'x'], [{ file: 'app.ts', line: 1, text: 'x' }]],
    [['src//app.ts:1', 'x'], [{ file: 'src/app.ts', line: 1, text: 'x' }]],
    [
      ['a.ts:1', 'one', 'b.ts:2', 'two'],
      [
        { file: 'a.ts', line: 1, text: 'one' },
        { file: 'b.ts', line: 2, text: 'two' },
      ],
    ],
  ])('%j → %j', (args, want) => {
    expect(parseCommentArgs(args)).toEqual(want);
  });

  it.each([
    [['a.ts:1'], '--comment takes a place and a text; "a.ts:1" has no text'],
    [['a.ts', 'x'], '--comment "a.ts": not <file>:<line>'],
    [['a.ts:0', 'x'], '--comment "a.ts:0": not <file>:<line>'],
    [['a.ts:1x', 'x'], 'not <file>:<line>'],
    [['a.ts:-0', 'x'], '--comment "a.ts:-0": not <file>:<line>'],
    [['a.ts:--1', 'x'], 'not <file>:<line>'],
    [[':3', 'x'], 'not <file>:<line>'],
    [['../etc/passwd:1', 'x'], 'must be a path inside the repository'],
    [['src/../../etc/passwd:1', 'x'], 'must be a path inside the repository'],
    [['src/..:1', 'x'], 'must be a path inside the repository'],
    [['/etc/passwd:1', 'x'], 'must be a path inside the repository'],
    [['a.ts:1', '   '], '--comment a.ts:1: the comment is empty'],
  ])('%j is refused: %s', (args, message) => {
    expect(() => parseCommentArgs(args)).toThrow(message);
  });

  it('a place keeps every colon but the last', () => {
    expect(parsePlace('C:dir/x.ts:7')).toEqual({ file: 'C:dir/x.ts', line: 7 });
  });
});

describe('the hunks of a change', () => {
  const files = parseHunks(PATCH);
  it.each([
    ['src/app.ts', 2, '@@ -1,4 +1,5 @@'],
    ['src/app.ts', 5, '@@ -1,4 +1,5 @@'],
    ['notes.txt', 1, '@@ -0,0 +1,2 @@'],
    ['src/app.ts', 6, null],
    ['other.ts', 1, null],
  ])('%s:%i is on %s', (file, line, header) => {
    expect(hunkAt(files, file, line)?.header ?? null).toBe(header);
  });

  it.each([
    ['src/app.ts', 2, '@@ -1,4 +1,5 @@'],
    ['src/app.ts', 1, null], // kept, not removed: a comment on it names its new side
    ['src/app.ts', 5, null],
    ['notes.txt', 1, null],
  ])('removed line %s:-%i is on %s', (file, line, header) => {
    expect(hunkAt(files, file, line, 'old')?.header ?? null).toBe(header);
  });
});

describe('the review file of --edit', () => {
  const initial = writeReviewFile({ run: 'r__abc123', revision: 2, message: 'overall', patch: PATCH });

  it('left as written: the message, no comments', () => {
    expect(parseReviewFile(initial, 'F')).toEqual({ message: 'overall', comments: [] });
  });

  it('a > line under a diff line comments that line of the new file (a removed line: of the old one); several > lines make one comment', () => {
    const edited = initial
      .replace('+export const y = x + 1;\n', '+export const y = x + 1;\n> y needs a test\n')
      .replace('-export const x = 1;\n', '-export const x = 1;\n>why remove it?\n')
      .replace('+two with ``` fences\n', '+two with ``` fences\n> first line\n> second line\n')
      .replace('overall', 'overall\n\nsecond paragraph\n# a note to self');
    expect(parseReviewFile(edited, 'F')).toEqual({
      message: 'overall\n\nsecond paragraph',
      comments: [
        { file: 'src/app.ts', line: 2, side: 'old', text: 'why remove it?' },
        { file: 'src/app.ts', line: 3, text: 'y needs a test' },
        { file: 'notes.txt', line: 2, text: 'first line\nsecond line' },
      ],
    });
  });

  it.each([
    [
      'above the change',
      (t: string) => `> too early\n${t}`,
      "F:1: a '>' comment must be right under a line of the change; it is above the change",
    ],
    [
      'under a header',
      (t: string) => t.replace('+++ b/notes.txt\n', '+++ b/notes.txt\n> x\n'),
      'it is under a header',
    ],
    [
      "under a hunk's @@ line (it was sent as the hunk's first line)",
      (t: string) => t.replace(/^(@@ [^\n]*)\n/m, '$1\n> on the hunk\n'),
      "it is under a hunk's @@ line, not under one of its lines",
    ],
  ])('a comment %s is refused, naming the line', (_what, edit, message) => {
    expect(() => parseReviewFile(edit(initial), 'F', PATCH)).toThrow(message);
  });

  it('saved with CRLF line ends (an editor on Windows): read as written', () => {
    const edited = initial.replace(
      '+export const y = x + 1;\n',
      '+export const y = x + 1;\n> crlf comment\n',
    );
    expect(parseReviewFile(edited.replaceAll('\n', '\r\n'), 'F', PATCH)).toEqual({
      message: 'overall',
      comments: [{ file: 'src/app.ts', line: 3, text: 'crlf comment' }],
    });
  });

  it.each([
    ['text typed below the change', (t: string) => `${t}please also rename x\n`],
    [
      'a line of the change changed',
      (t: string) => t.replace('+export const y = x + 1;', '+export const y = x + 2;'),
    ],
    [
      'text typed inside the change',
      (t: string) => t.replace('+++ b/notes.txt\n', '+++ b/notes.txt\nfix this\n'),
    ],
  ])('%s: refused, naming the line (it was dropped without a word)', (_what, edit) => {
    expect(() => parseReviewFile(edit(initial), 'F', PATCH)).toThrow(
      /^F:\d+: the change was edited here, and text in the change is not sent: nothing was sent$/,
    );
  });

  it('the change left as opened, with comments, # lines and trailing empty lines: no edit', () => {
    const edited = `${initial.replace('+export const y = x + 1;\n', '+export const y = x + 1;\n> ok\n# note\n')}\n\n`;
    expect(parseReviewFile(edited, 'F', PATCH).comments).toHaveLength(1);
  });

  it('emptied: an empty review (the command aborts)', () => {
    expect(parseReviewFile(initial.replace('overall', ''), 'F')).toEqual({ message: '', comments: [] });
  });
});

describe('a review that was not sent is opened again by the next --edit (it was overwritten)', () => {
  /** A run folder with the change, and an editor script (a real process) that runs `sh` on the file. */
  const setup = () => {
    const runDir = tempDir('agentbox-review-kept-');
    fs.writeFileSync(path.join(runDir, 'changes.patch'), PATCH);
    const editor = (script: string) => {
      const file = path.join(runDir, `editor-${Math.random().toString(36).slice(2)}.sh`);
      fs.writeFileSync(file, script);
      return { PATH: process.env.PATH, EDITOR: `sh ${file}`, VISUAL: '' };
    };
    return { runDir, editor };
  };
  const input = (runDir: string, revision = 2) => ({ runDir, runName: 'r__abc123', revision, edit: true });

  it('a comment with no line under it: the same command opens the review as written; sent, the file is gone', async () => {
    const { runDir, editor } = setup();
    const kept = path.join(runDir, REVIEW_FILE);
    // The person writes a message, a comment in its place and one with no line under it.
    const first = editor(
      `sed -i -e '1s/^/MY-WORDS keep them/' -e 's/^+export const y = x + 1;$/&\\n> IN-PLACE/' -e '1i > orphan' "$1"\n`,
    );
    await expect(collectReview(first, input(runDir))).rejects.toThrow(
      /must be right under a line of the change/,
    );
    expect(fs.readFileSync(kept, 'utf8')).toContain('MY-WORDS keep them');
    // "run the same command again": the editor gets the file as it was left, and fixes the one line.
    const second = editor(`grep -q '^MY-WORDS keep them$' "$1" || exit 3\nsed -i '/^> orphan$/d' "$1"\n`);
    const { review } = await collectReview(second, input(runDir));
    expect(review).toEqual({
      message: 'MY-WORDS keep them',
      comments: [{ file: 'src/app.ts', line: 3, text: 'IN-PLACE' }],
    });
    clearKeptReview(runDir);
    expect(fs.existsSync(kept)).toBe(false);
  });

  it('an editor that failed: the review kept is reopened, a message typed this time put first', async () => {
    const { runDir, editor } = setup();
    await expect(
      collectReview(editor(`sed -i '1s/^/WRITTEN-BEFORE/' "$1"; exit 1\n`), input(runDir)),
    ).rejects.toMatchObject({
      hint: expect.stringMatching(/is kept in .*: the same command opens it again/),
    });
    const { review } = await collectReview(editor('true\n'), { ...input(runDir), feedback: 'TYPED-NOW' });
    expect(review.message).toBe('TYPED-NOW\n\nWRITTEN-BEFORE');
  });

  it('a review kept for another change (a revision since) is moved aside, not overwritten, and a fresh one opens', async () => {
    const { runDir, editor } = setup();
    await expect(
      collectReview(editor(`sed -i '1s/^/OLD-WORDS/' "$1"; exit 1\n`), input(runDir, 2)),
    ).rejects.toThrow();
    const { review } = await collectReview(editor(`sed -i '1s/^/NEW-WORDS/' "$1"\n`), input(runDir, 3));
    expect(review.message).toBe('NEW-WORDS');
    expect(fs.readFileSync(path.join(runDir, `${REVIEW_FILE}.old`), 'utf8')).toContain('OLD-WORDS');
  });

  it('reopenedReview: the same change with comments in it is the same; another revision or change is not', () => {
    const fresh = writeReviewFile({ run: 'r__abc123', revision: 2, message: '', patch: PATCH });
    const commented = `words\n${fresh.replace('+one\n', '+one\n> a comment\n')}`;
    expect(reopenedReview(commented, fresh, '')).toBe(commented);
    expect(reopenedReview(commented, fresh, 'words')).toBe(commented);
    const later = writeReviewFile({ run: 'r__abc123', revision: 3, message: '', patch: PATCH });
    expect(reopenedReview(commented, later, '')).toBeNull();
    const other = writeReviewFile({
      run: 'r__abc123',
      revision: 2,
      message: '',
      patch: PATCH.replace('+one', '+uno'),
    });
    expect(reopenedReview(commented, other, '')).toBeNull();
    expect(reopenedReview('no heading at all', fresh, '')).toBeNull();
  });
});

describe('a line comment points at the change or the worktree, or nothing is sent', () => {
  const files = parseHunks(
    `${PATCH}diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex 4444444..0000000\n--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-old one\n-old two\n`,
  );
  const tree = (file: string) =>
    (
      ({
        'src/app.ts': { lines: 5 },
        'notes.txt': { lines: 2 },
        'README.md': { lines: 7 },
        vendor: 'other',
      }) as const
    )[file as 'src/app.ts'] ?? 'none';
  it.each<[string, LineComment, string | null]>([
    ['a line the change added', { file: 'src/app.ts', line: 3, text: 't' }, null],
    ['a line it left alone, in the worktree', { file: 'src/app.ts', line: 5, text: 't' }, null],
    ['a file it did not touch, within its lines', { file: 'README.md', line: 7, text: 't' }, null],
    ['a line it removed', { file: 'src/app.ts', line: 2, side: 'old', text: 't' }, null],
    ['a line of a file it removed', { file: 'gone.txt', line: 2, side: 'old', text: 't' }, null],
    ['something not a file (a link, a folder): taken', { file: 'vendor', line: 9, text: 't' }, null],
    [
      'a file in neither',
      { file: 'nope.txt', line: 1, text: 't' },
      "the comment on nope.txt:1: nope.txt is neither in the change nor in the run's worktree",
    ],
    [
      'a line past a file’s end',
      { file: 'README.md', line: 999, text: 't' },
      "the comment on README.md:999: README.md has 7 line(s) in the run's worktree: line 999 is past its end",
    ],
    [
      'a place with two colons (a file named "notes.txt:1")',
      { file: 'notes.txt:1', line: 2, text: 't' },
      "the comment on notes.txt:1:2: notes.txt:1 is neither in the change nor in the run's worktree",
    ],
    [
      'a removed line the change did not remove',
      { file: 'notes.txt', line: 999, side: 'old', text: 't' },
      'the comment on notes.txt:-999: line 999 of notes.txt before the change is not a line the change removed',
    ],
    [
      'a new-side line of a file the change removed',
      { file: 'gone.txt', line: 1, text: 't' },
      'the comment on gone.txt:1: the change removes gone.txt: name its lines by their number before it (gone.txt:-<line>)',
    ],
  ])('%s', (_what, comment, problem) => {
    expect(placeProblem(comment, files, tree)).toBe(problem);
  });

  it('collectReview refuses it from the real worktree before anything is sent; a hostile name is shown escaped', async () => {
    const runDir = tempDir('agentbox-places-run-');
    const worktree = tempDir('agentbox-places-wt-');
    fs.writeFileSync(path.join(runDir, 'changes.patch'), PATCH);
    fs.mkdirSync(path.join(worktree, 'src'));
    fs.writeFileSync(path.join(worktree, 'src/app.ts'), 'a\nb\nc\nd\ne');
    fs.symlinkSync('/dev/zero', path.join(worktree, 'zero'));
    const input = (comments: string[]) => ({ runDir, runName: 'r__abc123', revision: 2, worktree, comments });
    await expect(collectReview({}, input(['src/app.ts:5', 'ok']))).resolves.toBeTruthy();
    await expect(collectReview({}, input(['zero:3', 'a link: not followed']))).resolves.toBeTruthy();
    await expect(collectReview({}, input(['src/app.ts:6', 'past']))).rejects.toMatchObject({
      code: 'USAGE',
      message:
        "the comment on src/app.ts:6: src/app.ts has 5 line(s) in the run's worktree: line 6 is past its end: nothing was sent",
      hint: expect.stringContaining('agentbox diff abc123'),
    });
    await expect(collectReview({}, input(['ev\x1b]0;t\x07il.txt:1', 'x']))).rejects.toMatchObject({
      message: expect.stringContaining('"ev\\x1b]0;t\\x07il.txt" is neither'),
    });
  });
});

describe('{{review}}: the form the agent gets (the prompt contract)', () => {
  it('the message verbatim, then each comment with its place and its hunk, the line marked', () => {
    const review = {
      message: 'Good. Two things:',
      comments: [
        { file: 'src/app.ts', line: 3, text: 'y needs a test' },
        { file: 'notes.txt', line: 2, text: 'no fences here' },
        { file: 'README.md', line: 9, text: 'mention it here' },
        { file: 'src/app.ts', line: 2, side: 'old' as const, text: 'why remove it?' },
        { file: 'src/app.ts', line: 1, side: 'old' as const, text: 'kept, not removed' },
      ],
    };
    expect(renderReview(review, parseHunks(PATCH))).toBe(
      [
        'Good. Two things:',
        '',
        '## Line comments',
        '',
        '### 1. src/app.ts:3',
        '',
        'y needs a test',
        '',
        'The hunk of your change it is on (the line marked with ←):',
        '```diff',
        '@@ -1,4 +1,5 @@',
        ' export const a = 1;',
        '-export const x = 1;',
        '+export const x = 42;',
        '+export const y = x + 1;  ←',
        ' export const b = 2;',
        ' export const c = 3;',
        '```',
        '',
        '### 2. notes.txt:2',
        '',
        'no fences here',
        '',
        'The hunk of your change it is on (the line marked with ←):',
        '````diff',
        '@@ -0,0 +1,2 @@',
        '+one',
        '+two with ``` fences  ←',
        '````',
        '',
        '### 3. README.md:9',
        '',
        'mention it here',
        '',
        '(line 9 of README.md is not in your change)',
        '',
        '### 4. src/app.ts:-2 (line 2 before your change: a line it removed)',
        '',
        'why remove it?',
        '',
        'The hunk of your change it is on (the line marked with ←):',
        '```diff',
        '@@ -1,4 +1,5 @@',
        ' export const a = 1;',
        '-export const x = 1;  ←',
        '+export const x = 42;',
        '+export const y = x + 1;',
        ' export const b = 2;',
        ' export const c = 3;',
        '```',
        '',
        '### 5. src/app.ts:-1 (line 1 before your change: a line it removed)',
        '',
        'kept, not removed',
        '',
        '(removed line 1 of src/app.ts is not in your change)',
      ].join('\n'),
    );
  });

  it('the revision message: a fixed first line, then the template with {{review}} filled verbatim', () => {
    const values = { review: '{{task}} /clear', revision: '2', branch: 'agentbox/r' } as never;
    expect(revisionMessage({ body: 'On {{branch}}, revision {{revision}}:\n\n{{review}}\n' }, values)).toBe(
      '<!-- agentbox: revision 2 (agentbox revise) -->\nOn agentbox/r, revision 2:\n\n{{task}} /clear\n',
    );
  });
});

describe('the revise template', () => {
  it('the built-in fix template places {{review}}; one of yours without it is refused, naming the file', () => {
    const project = tempDir('agentbox-revise-tpl-');
    expect(loadReviseTemplate({ global: null, project }, 'fix').body).toContain('{{review}}');
    // The agent learns where its change is: HEAD, so git diff shows nothing of it (an "undo" with
    // git checkout -- <file> did nothing, found by a user's eye).
    const filled = revisionMessage(loadReviseTemplate({ global: null, project }, 'fix'), {
      review: 'r',
      revision: '2',
      branch: 'agentbox/r',
      base: 'c0ffee',
    } as never);
    expect(filled).toContain('`git diff c0ffee` shows all of it');
    expect(filled).toContain('`git checkout c0ffee -- <file>` puts a file back');
    fs.writeFileSync(path.join(project, 'fix.revise.md'), 'Please revise. \\{{review}} is escaped.\n');
    expect(() => loadReviseTemplate({ global: null, project }, 'fix')).toThrow(
      `template ${path.join(project, 'fix.revise.md')}: it has no {{review}}`,
    );
  });
});
