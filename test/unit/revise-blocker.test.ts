import { describe, expect, it } from 'vitest';
import { revisionLine } from '../../src/commands/revise.js';
import type { RunDetails, RunMeta, RunState } from '../../src/ledger/index.js';
import type { RevisionRecord } from '../../src/ledger/revisions.js';
import { reviseBlocker } from '../../src/run/revise.js';
import { tempDir } from '../helpers/git-repo.js';

/** What `agentbox revise` refuses, each with what failed, the value and the next command. */
describe('reviseBlocker', () => {
  const worktree = tempDir('agentbox-wt-');
  const name = '26-11-28_1200__add-x__abc123';
  const run = (meta: Partial<RunMeta> = {}, state: Partial<RunState> | null = {}): RunDetails => ({
    name,
    dir: '/nowhere',
    files: [],
    meta: { run_id: 'abc123', run_name: name, type: 'fix', ...meta } as RunMeta,
    state:
      state === null
        ? null
        : ({
            status: 'REVIEW',
            session_id: 's-1',
            worktree_path: worktree,
            pid: null,
            pid_start: null,
            ...state,
          } as RunState),
  });

  it('lets a fix run in REVIEW with its session and worktree be revised', () => {
    expect(() => reviseBlocker(run())).not.toThrow();
  });

  it("lets a group's attempt in REVIEW be revised (the person chose it: revise <group> --attempt k)", () => {
    const attempt = { summary: { type: 'fix', task: 'x', group: { id: 'g1', attempt: 2, attempts: 3 } } };
    expect(() => reviseBlocker(run({}, attempt as Partial<RunState>))).not.toThrow();
  });

  it.each([
    [
      'a fetched run',
      run({ origin: { remote: 'origin', host: 'ci-7', run: name } }),
      'ran on ci-7: its Claude Code session is there, so it cannot be revised here',
      'revise it on ci-7',
    ],
    ['a scout run', run({ type: 'scout' }), 'is a scout run: only a fix run', 'agentbox scout "…"'],
    ['a merged run', run({}, { status: 'MERGED' }), 'is already MERGED', 'agentbox fix "…"'],
    ['a discarded run', run({}, { status: 'DISCARDED' }), 'is already DISCARDED', 'agentbox fix "…"'],
    [
      'an aborted run',
      run({}, { status: 'ABORTED' }),
      'is ABORTED; only a run in REVIEW can be revised',
      'agentbox resume abc123 "<instructions>"',
    ],
    [
      'a run that is running',
      run({}, { status: 'ACTIVE', pid: process.pid, pid_start: null }),
      'is still running',
      'agentbox stop abc123',
    ],
    [
      'a DONE run (no change)',
      run({}, { status: 'DONE' }),
      'is DONE; only a run in REVIEW',
      'agentbox fix "…"',
    ],
    [
      'a run with no session',
      run({}, { session_id: null }),
      'never started a Claude Code session',
      'agentbox fix',
    ],
    [
      'a run whose worktree is gone',
      run({}, { worktree_path: '/nowhere/wt' }),
      'the worktree of 26-11-28_1200__add-x__abc123 is gone: /nowhere/wt',
      'agentbox merge abc123',
    ],
  ])('refuses %s', (_what, details, message, next) => {
    let error: { message: string; hint?: string } | undefined;
    try {
      reviseBlocker(details);
    } catch (e) {
      error = e as { message: string; hint?: string };
    }
    expect(error?.message).toContain(message);
    expect(error?.hint).toContain(next);
  });
});

describe('revisionLine: a revision that broke runs.verify names a next step the run allows', () => {
  const record = (status: RevisionRecord['status']): RevisionRecord => ({
    schema_version: 1,
    revision: 2,
    status,
    started_at: '2026-11-30T00:00:00Z',
    ended_at: '2026-11-30T00:00:01Z',
    duration_ms: 1000,
    cost_usd: 0.01,
    verified: false,
    from_commit: null,
    commit: null,
    feedback: 'revisions/2/feedback.md',
  });
  it('in REVIEW: revise it again', () => {
    expect(revisionLine(record('REVIEW'), 'abc123')).toContain(
      'revise it again (agentbox revise abc123 "…")',
    );
  });
  it('ended by the supervisor (ABORTED): resume, which a revise would refuse (it said "revise it again")', () => {
    const line = revisionLine(record('ABORTED'), 'abc123');
    expect(line).toContain('the run is ABORTED: go on with agentbox resume abc123 "<what to fix>"');
    expect(line).not.toContain('agentbox revise');
  });
});
