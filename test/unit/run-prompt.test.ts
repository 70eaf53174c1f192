import { describe, expect, it } from 'vitest';
import type { RunType } from '../../src/ledger/types.js';
import {
  CONTINUE_PROMPT,
  type PromptInput,
  resumePrompt,
  systemPromptAddition,
  taskPrompt,
} from '../../src/run/begin/prompt.js';

const ID = '0a1b2c';
const NAME = `26-01-02_0304__fix-the-login__${ID}`;
const RUN_DIR = `/repo/.agents/runs/${NAME}`;
const WORKTREE = `/repo/.agents/worktrees/${NAME}`;

describe('taskPrompt', () => {
  it.each<[string, string]>([
    ['plain', 'why is login slow?'],
    ['a slash command look-alike', '/run_0a1b2c:merge_0a1b2c now'],
    ['a file mention', '@src/secrets.ts summarise this'],
    ['a flag look-alike', '--dangerously-skip-permissions'],
    ['a lone dash', '-'],
    ['newlines and blank lines', 'first line\n\nsecond line\r\nthird\n'],
    ['leading and trailing spaces', '   indented task   '],
    ['shell metacharacters', 'fix "a; rm -rf ~" && $(whoami) `id` > /dev/null'],
    ['unicode', 'répare le café ☕ — 修复登录 😀 \u200b zero-width'],
    ['a prompt look-alike first line', 'agentbox fix task (verbatim from the user):\nfake'],
  ])('keeps a task byte for byte after the fixed first line: %s', (_name, task) => {
    for (const type of ['scout', 'plan', 'fix', 'review'] as RunType[]) {
      const prompt = taskPrompt(type, task);
      const header = `agentbox ${type} task (verbatim from the user):\n`;
      expect(prompt.startsWith(header)).toBe(true);
      expect(prompt.slice(header.length)).toBe(task);
      expect(Buffer.from(prompt.slice(header.length))).toEqual(Buffer.from(task));
      // The first character is never one claude interprets.
      expect(prompt[0]).toBe('a');
    }
  });
});

describe('systemPromptAddition', () => {
  const base = (over: Partial<PromptInput> = {}): PromptInput => ({
    type: 'scout',
    runName: NAME,
    runId: ID,
    runDir: RUN_DIR,
    worktree: null,
    safeCommands: [`scout_${ID}`, `report_${ID}`],
    ...over,
  });

  it.each<[RunType, string]>([
    ['scout', 'report.md'],
    ['plan', 'plan.md'],
    ['review', 'report.md'],
  ])('a read-only %s run: RUN_DIR, read-only, its commands and deliverable', (type, deliverable) => {
    const text = systemPromptAddition(base({ type, safeCommands: [`${type}_${ID}`, `report_${ID}`] }));
    expect(text).toContain(`agentbox run ${NAME} (type: ${type})`);
    expect(text).toContain(`RUN_DIR=${RUN_DIR}`);
    expect(text).toContain('read-only');
    expect(text).not.toContain('worktree');
    expect(text).toContain(`/run_${ID}:${type}_${ID}`);
    expect(text).toContain(`/run_${ID}:report_${ID}`);
    expect(text).toContain(deliverable);
    expect(text).toContain('agentbox merge');
  });

  it('a fix run: its worktree, not read-only', () => {
    const text = systemPromptAddition(
      base({ type: 'fix', worktree: WORKTREE, safeCommands: [`fix_${ID}`, `report_${ID}`] }),
    );
    expect(text).toContain(`RUN_DIR=${RUN_DIR}`);
    expect(text).toContain(`Your working tree is ${WORKTREE}`);
    expect(text).not.toContain('read-only');
    expect(text).toContain(`Your run's commands: /run_${ID}:fix_${ID}, /run_${ID}:report_${ID}.`);
    expect(text).toContain('changes.patch');
  });

  it('names every safe command it is given, in order', () => {
    const commands = ['a_0a1b2c', 'b_0a1b2c', 'c_0a1b2c'];
    const text = systemPromptAddition(base({ safeCommands: commands }));
    expect(text).toContain(
      `Your run's commands: /run_${ID}:a_0a1b2c, /run_${ID}:b_0a1b2c, /run_${ID}:c_0a1b2c.`,
    );
  });

  it('has no blank lines (a type without a deliverable leaves none)', () => {
    for (const type of ['scout', 'fix', 'review', 'interactive'] as RunType[]) {
      const text = systemPromptAddition(base({ type, worktree: type === 'fix' ? WORKTREE : null }));
      expect(text.split('\n').every((line) => line.trim() !== '')).toBe(true);
    }
  });
});

describe('resumePrompt', () => {
  it.each<[string, string | undefined, string]>([
    ['no more instructions', undefined, CONTINUE_PROMPT],
    ['an empty string', '', CONTINUE_PROMPT],
    [
      'more instructions, verbatim',
      '/also fix the tests\n@README.md',
      'agentbox resume — more instructions from the user (verbatim):\n/also fix the tests\n@README.md',
    ],
  ])('%s', (_name, more, expected) => {
    expect(resumePrompt(more)).toBe(expected);
  });

  it('CONTINUE_PROMPT is a plain sentence', () => {
    expect(CONTINUE_PROMPT).toBe('Continue the task where you left off.');
  });
});
