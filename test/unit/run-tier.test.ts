import { describe, expect, it } from 'vitest';
import { configHash, type Envelope, type RunType } from '../../src/ledger/index.js';
import {
  allowedTools,
  buildEnvelope,
  HEADLESS_TYPES,
  needsWorktree,
  type TierInput,
} from '../../src/run/begin/tier.js';

const ID = '0a1b2c';
const WORKTREE = '/repo/.agents/worktrees/26-01-02_0304__fix-it__0a1b2c';

const input = (over: Partial<TierInput> = {}): TierInput => ({
  type: 'scout',
  runId: ID,
  model: null,
  worktree: null,
  fixAllowed: ['Bash'],
  ...over,
});
const skill = (kind: string) => `Skill(run_${ID}:${kind}_${ID})`;

describe('buildEnvelope: read-only types', () => {
  it.each<[RunType, string]>([
    ['scout', 'scout'],
    ['plan', 'plan'],
    ['review', 'review'],
  ])('%s is offered no edit tool and pre-approves only its Skill rules', (type, kind) => {
    const envelope = buildEnvelope(input({ type, fixAllowed: ['Bash', 'WebFetch'] }));
    expect(envelope.tools_allowlist).toEqual(['Read', 'Grep', 'Glob', 'Bash', 'Skill']);
    expect(envelope.tools_allowlist).not.toContain('Edit');
    expect(envelope.tools_allowlist).not.toContain('Write');
    expect(allowedTools(envelope)).toEqual([skill(kind), skill('report')]);
    expect(envelope.safe_commands).toEqual([`${kind}_${ID}`, `report_${ID}`]);
    expect(envelope.human_only_commands).toEqual([`merge_${ID}`, `apply_${ID}`]);
  });

  it('ignores a worktree it was given anyway', () => {
    const envelope = buildEnvelope(input({ type: 'scout', worktree: WORKTREE }));
    expect(allowedTools(envelope)).toEqual([skill('scout'), skill('report')]);
    expect(envelope.tools_allowlist).not.toContain('Edit');
  });

  it('records the model, or null', () => {
    expect(buildEnvelope(input({ model: 'claude-sonnet-4-5' })).model).toBe('claude-sonnet-4-5');
    expect(buildEnvelope(input()).model).toBeNull();
  });
});

describe('buildEnvelope: fix', () => {
  it('is offered Edit and Write and pre-approves edits only inside its worktree', () => {
    const envelope = buildEnvelope(
      input({ type: 'fix', worktree: WORKTREE, fixAllowed: ['Bash', 'WebFetch'] }),
    );
    expect(envelope.tools_allowlist).toEqual(['Read', 'Grep', 'Glob', 'Bash', 'Skill', 'Edit', 'Write']);
    expect(allowedTools(envelope)).toEqual([
      `Edit(//${WORKTREE.slice(1)}/**)`,
      'Bash',
      'WebFetch',
      skill('fix'),
      skill('report'),
    ]);
    // `//abs/path` is the absolute-path spelling of Claude Code's rules.
    expect(allowedTools(envelope)[0]).toBe(`Edit(/${WORKTREE}/**)`);
    expect(envelope.safe_commands).toEqual([`fix_${ID}`, `report_${ID}`]);
  });

  it('with no fix_allowed_tools pre-approves edits and its commands only', () => {
    const envelope = buildEnvelope(input({ type: 'fix', worktree: WORKTREE, fixAllowed: [] }));
    expect(allowedTools(envelope)).toEqual([`Edit(/${WORKTREE}/**)`, skill('fix'), skill('report')]);
  });

  it('throws without a worktree', () => {
    expect(() => buildEnvelope(input({ type: 'fix', worktree: null }))).toThrow(/needs its worktree/);
  });

  it.each<[RunType, boolean]>([
    ['fix', true],
    ['scout', false],
    ['plan', false],
    ['review', false],
    ['interactive', false],
  ])('needsWorktree(%s) is %s', (type, expected) => {
    expect(needsWorktree(type)).toBe(expected);
  });

  it('the headless types are the four a user starts', () => {
    expect(HEADLESS_TYPES).toEqual(['scout', 'plan', 'fix', 'review']);
  });
});

describe('allowedTools', () => {
  const base: Envelope = { model: null, tools_allowlist: [], safe_commands: [], human_only_commands: [] };
  it.each<[string, Envelope['extra'], string[]]>([
    ['no extra', undefined, []],
    ['extra without the key', { permission_mode: 'default' }, []],
    ['a list', { allowed_tools: ['Bash', 'Edit(//x/**)'] }, ['Bash', 'Edit(//x/**)']],
    ['not a list', { allowed_tools: 'Bash' }, []],
    ['non-strings are dropped', { allowed_tools: ['Bash', 3, null, { a: 1 }, 'Read'] }, ['Bash', 'Read']],
  ])('%s', (_name, extra, expected) => {
    expect(allowedTools(extra === undefined ? base : { ...base, extra })).toEqual(expected);
  });
});

describe('the envelope config_hash', () => {
  const fix = input({ type: 'fix', worktree: WORKTREE, model: 'opus', fixAllowed: ['Bash'] });
  const hash = (over: Partial<TierInput>) => configHash(buildEnvelope({ ...fix, ...over }));

  it('is 16 hex characters and stable for the same input', () => {
    expect(hash({})).toMatch(/^[0-9a-f]{16}$/);
    expect(hash({})).toBe(hash({}));
    expect(hash({ fixAllowed: ['Bash'] })).toBe(hash({}));
    // A copy of the envelope (as meta.yaml stores it) hashes alike.
    expect(configHash(JSON.parse(JSON.stringify(buildEnvelope(fix))))).toBe(hash({}));
  });

  it.each<[string, Partial<TierInput>]>([
    ['the model changes', { model: 'sonnet' }],
    ['the model is unset', { model: null }],
    ['fix_allowed_tools gains a tool', { fixAllowed: ['Bash', 'WebFetch'] }],
    ['fix_allowed_tools is emptied', { fixAllowed: [] }],
    ['fix_allowed_tools changes order', { fixAllowed: ['WebFetch', 'Bash'] }],
    ['the type changes', { type: 'scout' }],
    ['the worktree moves', { worktree: '/elsewhere/wt' }],
    ['the run id changes', { runId: 'ffffff' }],
  ])('changes when %s', (_name, over) => {
    expect(hash(over)).not.toBe(hash({}));
  });

  it('a read-only type is not affected by fix_allowed_tools', () => {
    const scout = (fixAllowed: string[]) =>
      configHash(buildEnvelope(input({ type: 'scout', model: 'opus', fixAllowed })));
    expect(scout(['Bash', 'WebFetch'])).toBe(scout([]));
  });

  it('differs between every pair of headless types', () => {
    const hashes = HEADLESS_TYPES.map((type) =>
      configHash(buildEnvelope(input({ type, worktree: needsWorktree(type) ? WORKTREE : null }))),
    );
    expect(new Set(hashes).size).toBe(HEADLESS_TYPES.length);
  });
});
