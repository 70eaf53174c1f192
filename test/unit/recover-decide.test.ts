import { describe, expect, it } from 'vitest';
import { FAILURE_KINDS, RUN_STATUSES, RUN_TYPES } from '../../src/ledger/types.js';
import { decideRecovery, MAX_RECOVERIES, mayResume, type RecoveryFacts } from '../../src/recover/decide.js';

/** A fix run whose supervisor died (the watchdog marked it CRASHED) with everything consistent. */
const base: RecoveryFacts = {
  status: 'CRASHED',
  type: 'fix',
  failureKind: 'crashed',
  supervisorAlive: false,
  sessionResumable: true,
  streamWhole: true,
  worktree: { exists: true, busy: null },
  hasCheckpoint: true,
  attempts: 0,
};

describe('decideRecovery', () => {
  it.each<[string, Partial<RecoveryFacts>, string, string]>([
    ['consistent: resume', {}, 'resume', 'its session and files are consistent'],
    [
      'ACTIVE with a dead supervisor (no watchdog yet)',
      { status: 'ACTIVE', failureKind: null },
      'resume',
      'consistent',
    ],
    ['claude killed by a signal', { failureKind: 'killed' }, 'resume', 'consistent'],
    ['STALLED and dead', { status: 'STALLED', failureKind: 'stalled' }, 'resume', 'consistent'],
    ['running', { status: 'ACTIVE', supervisorAlive: true }, 'none', 'it is running'],
    [
      'STALLED but alive',
      { status: 'STALLED', failureKind: 'stalled', supervisorAlive: true },
      'none',
      'running',
    ],
    ['REVIEW waits for the gate', { status: 'REVIEW', failureKind: null }, 'keep_waiting', 'agentbox merge'],
    [
      'a timeout is a decision, not a crash',
      { failureKind: 'timeout' },
      'none',
      'CRASHED (timeout): not a crash',
    ],
    ['the budget ended it', { status: 'ABORTED', failureKind: 'budget' }, 'none', 'not a crash'],
    ['DONE', { status: 'DONE', failureKind: null }, 'none', 'DONE: not a crash'],
    [
      'an interactive session',
      { type: 'interactive', worktree: null },
      'keep_waiting',
      'agentbox start --resume',
    ],
    ['too many recoveries', { attempts: MAX_RECOVERIES }, 'give_up', 'recovered 3 times already'],
    ['the worktree is gone', { worktree: { exists: false, busy: null } }, 'give_up', 'its worktree is gone'],
    [
      'no conversation to resume',
      { sessionResumable: false },
      'rollback_replay',
      'its session has no conversation',
    ],
    ['a cut stream line', { streamWhole: false }, 'rollback_replay', 'its stream log ends in a cut line'],
    [
      'git left a lock',
      { worktree: { exists: true, busy: 'git left index.lock behind' } },
      'rollback_replay',
      'in its worktree git left index.lock behind',
    ],
  ])('%s → %s', (_, facts, kind, reason) => {
    const action = decideRecovery({ ...base, ...facts });
    expect(action.kind).toBe(kind);
    expect(action.reason).toContain(reason);
  });

  it('rolls back to the checkpoint, to the start without one, and nothing for a run without a worktree', () => {
    const incomplete = { ...base, sessionResumable: false };
    expect(decideRecovery(incomplete)).toMatchObject({ to: 'checkpoint' });
    expect(decideRecovery({ ...incomplete, hasCheckpoint: false })).toMatchObject({ to: 'start' });
    const scout = decideRecovery({ ...incomplete, type: 'scout', worktree: null, hasCheckpoint: false });
    expect(scout).toMatchObject({ kind: 'rollback_replay', to: null });
    expect(scout.reason).toContain('nothing to roll back and the task is replayed in a new session');
  });
});

describe('mayResume: what the web UI reads before it decides', () => {
  it('is true for every status, failure kind, type and origin decideRecovery can resume or replay, whatever the other facts', () => {
    const kinds = [null, ...FAILURE_KINDS];
    const others: Partial<RecoveryFacts>[] = [
      {},
      { sessionResumable: false },
      { streamWhole: false },
      { worktree: null, hasCheckpoint: false },
      { worktree: { exists: true, busy: 'a rebase' } },
    ];
    let resumed = 0;
    for (const status of RUN_STATUSES)
      for (const failureKind of kinds)
        for (const type of RUN_TYPES)
          for (const ranElsewhere of [null, 'build-box'])
            for (const other of others) {
              const facts = { ...base, status, failureKind, type, ranElsewhere, ...other };
              const { kind } = decideRecovery(facts);
              if (kind !== 'resume' && kind !== 'rollback_replay') continue;
              resumed++;
              const what = `${status} ${failureKind} ${type} ${ranElsewhere}`;
              expect(mayResume(status, failureKind, type, ranElsewhere), what).toBe(true);
              // A run whose type is not known (no readable meta.yaml) could be any.
              expect(mayResume(status, failureKind, null, ranElsewhere), what).toBe(true);
            }
    expect(resumed).toBeGreaterThan(0);
  });

  it.each<[string, Parameters<typeof mayResume>]>([
    ['waiting for review', ['REVIEW', null, 'fix', null]],
    ['a timeout', ['CRASHED', 'timeout', 'fix', null]],
    ['an interactive session', ['CRASHED', 'crashed', 'interactive', null]],
    ['a run fetched from elsewhere', ['CRASHED', 'crashed', 'fix', 'build-box']],
  ])('is false for %s', (_, args) => {
    expect(mayResume(...args)).toBe(false);
  });
});
