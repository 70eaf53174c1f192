import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addWorktree, headSha } from '../../src/git/worktree.js';
import { updateState } from '../../src/ledger/index.js';
import { HttpError } from '../../src/web/http.js';
import { commentArgs, reviseAction } from '../../src/web/revise.js';
import { interdiffOf, revisionsOf } from '../../src/web/revisions.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { create, errorOf, ledgerRepo } from './fixtures/ledger.js';

/**
 * `POST /api/runs/<run>/revise` (issue 39): the CLI's refusals, as HTTP — a run that cannot be
 * revised is 409, a bad review 400 — each with its message and hint, and each logged `by: "ui"`.
 */
describe('the page asks for a revision', () => {
  const setup = async (state: Record<string, unknown>) => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
    await updateState(ledger, run.name, state);
    const env = { ...GIT_ENV, PATH: process.env.PATH, HOME: tempDir('agentbox-home-') };
    const ac = { root: repo.dir, ledger, env };
    const events = () => fs.readFileSync(path.join(run.dir, 'events.jsonl'), 'utf8');
    return { ac, run, events };
  };

  it.each([
    ['an aborted run', { status: 'ABORTED' }, /is ABORTED; only a run in REVIEW/],
    ['a merged run', { status: 'MERGED' }, /is already MERGED/],
    [
      'a run in REVIEW with no session',
      { status: 'REVIEW', session_id: null },
      /never started a Claude Code session/,
    ],
    [
      'a run in REVIEW whose session is gone',
      { status: 'REVIEW', session_id: 'gone-1', worktree_path: '/' },
      /the Claude Code session of .* is gone/,
    ],
  ])('%s: 409 with the message and hint, logged', async (_, state, message) => {
    const { ac, run, events } = await setup(state);
    const error = await errorOf(() => reviseAction(ac, run.id, { message: 'rename x' }));
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(409);
    expect((error as HttpError).message).toMatch(message);
    expect((error as HttpError).extra.hint).toEqual(expect.any(String));
    const refused = events()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.event === 'revise_refused');
    expect(refused).toEqual([expect.objectContaining({ by: 'ui', reason: (error as Error).message })]);
  });

  it('a run the checks of any run refuse (its session and worktree there): 409, logged', async () => {
    const { ac, run, events } = await setup({});
    const home = ac.env.HOME!;
    fs.mkdirSync(path.join(home, '.claude', 'projects', 'p'), { recursive: true });
    fs.writeFileSync(path.join(home, '.claude', 'projects', 'p', 's-1.jsonl'), '{}\n');
    const wt = path.join(tempDir('agentbox-wt-'), run.name);
    await addWorktree(ac.root, { path: wt, branch: `agentbox/${run.name}`, base: (await headSha(ac.root))! });
    await updateState(ac.ledger, run.name, {
      status: 'REVIEW',
      session_id: 's-1',
      worktree_path: fs.realpathSync(wt),
    });
    const error = await errorOf(() => reviseAction(ac, run.id, { message: 'rename x' }));
    // Today's envelope is not the run's: CONFIG_CHANGED, a conflict (the page cannot --force it).
    expect((error as HttpError).status).toBe(409);
    expect((error as Error).message).toMatch(/the envelope of .* changed since it started/);
    expect((error as HttpError).extra.code).toBe('CONFIG_CHANGED');
    expect(events()).toContain('"revise_refused"');
  });

  it('an unknown run is 404', async () => {
    const { ac } = await setup({ status: 'REVIEW' });
    const error = await errorOf(() => reviseAction(ac, 'zzzzzz', { message: 'x' }));
    expect((error as HttpError).status).toBe(404);
  });

  it.each([
    ['not a list', { file: 'a', line: 1, text: 't' }, /"comments" must be a list/],
    ['no line', [{ file: 'a', text: 't' }], /comment 1: not \{file, line, side\?, text\}/],
    ['a negative line', [{ file: 'a', line: -3, text: 't' }], /comment 1: not .*"line":-3/],
    ['another side', [{ file: 'a', line: 3, side: 'left', text: 't' }], /comment 1: not .*"side":"left"/],
    ['a line as text', [{ file: 'a', line: '3', text: 't' }], /comment 1: not/],
    [
      'no text',
      [
        { file: 'a', line: 1, text: 't' },
        { file: 'b', line: 2 },
      ],
      /comment 2: not/,
    ],
  ])('comments %s: 400 naming the item', async (_, comments, message) => {
    const error = await errorOf(() => commentArgs(comments));
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).message).toMatch(message);
  });

  it("comments become the CLI's --comment values, a path with a colon kept whole", () => {
    expect(
      commentArgs([
        { file: 'src/a.ts', line: 3, text: 'rename x' },
        { file: 'docs/a:b.md', line: 1, text: 'typo' },
        { file: 'src/a.ts', line: 7, side: 'old', text: 'why remove it?' },
        { file: 'src/a.ts', line: 8, side: 'new', text: 'the new side' },
      ]),
    ).toEqual([
      'src/a.ts:3',
      'rename x',
      'docs/a:b.md:1',
      'typo',
      'src/a.ts:-7',
      'why remove it?',
      'src/a.ts:8',
      'the new side',
    ]);
    expect(commentArgs(undefined)).toEqual([]);
  });
});

describe('a revised run on the page: its revisions and their interdiffs', () => {
  it('lists revisions oldest first with record, feedback and interdiff; answers revision k’s interdiff, 400/404 otherwise', async () => {
    const { ledger, repo } = ledgerRepo();
    const run = await create(ledger, 'add x', '2026-03-01T10:00:00Z', { type: 'fix' });
    const dir = (k: number) => path.join(run.dir, 'revisions', String(k));
    for (const k of [1, 2, 10]) fs.mkdirSync(dir(k), { recursive: true });
    fs.mkdirSync(path.join(run.dir, 'revisions', 'x'));
    fs.writeFileSync(path.join(dir(2), 'feedback.md'), 'rename x\n');
    fs.writeFileSync(path.join(dir(2), 'interdiff.patch'), 'diff --git a/x b/x\n');
    fs.writeFileSync(
      path.join(dir(2), 'revision.json'),
      JSON.stringify({
        schema_version: 1,
        revision: 2,
        status: 'REVIEW',
        started_at: '2026-03-01T10:00:00Z',
        ended_at: '2026-03-01T10:01:00Z',
        duration_ms: 60000,
        cost_usd: 0.01,
        verified: null,
        from_commit: null,
        commit: null,
        feedback: 'feedback.md',
      }),
    );
    const listed = revisionsOf(run.dir);
    expect(listed.map((r) => r.revision)).toEqual([1, 2, 10]);
    expect(listed[1]).toEqual({
      revision: 2,
      record: expect.objectContaining({ status: 'REVIEW' }),
      feedback: 'rename x\n',
      interdiff: true,
    });
    expect(listed[0]).toEqual({ revision: 1, record: null, feedback: null, interdiff: false });
    // A feedback of megabytes goes to the page cut (it is sent again with every redraw), not whole,
    // and a character is not cut in two.
    // (the 65,536th byte is the first half of an é)
    fs.writeFileSync(path.join(dir(10), 'feedback.md'), `x${'é'.repeat(500_000)}`);
    const big = revisionsOf(run.dir)[2]!;
    expect(big.feedback_cut).toBe(1_000_001);
    expect(Buffer.byteLength(big.feedback!)).toBe(64 * 1024 - 1);
    expect(big.feedback).toMatch(/^xé+$/);
    expect(await interdiffOf(ledger, repo.dir, run.id, '2')).toEqual({
      run: run.name,
      revision: 2,
      patch: 'diff --git a/x b/x\n',
      too_large: false,
    });
    for (const [k, status] of [
      ['1', 404],
      ['0', 400],
      ['../2', 400],
      ['2x', 400],
    ] as const) {
      const error = await errorOf(() => interdiffOf(ledger, repo.dir, run.id, k));
      expect([k, (error as HttpError).status]).toEqual([k, status]);
    }
  });
});
