import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { HookInput } from '../../src/endpoint/server.js';
import { EventLog } from '../../src/ledger/events.js';
import { enqueue, pendingCount } from '../../src/supervisor/inbox.js';
import type { ModelReply } from '../../src/supervisor/model.js';
import type { SupervisorConfig } from '../../src/supervisor/rules.js';
import { Supervisor, type SupervisorEnd, type SupervisorOptions } from '../../src/supervisor/supervisor.js';
import { DEFAULT_ACTIONS } from '../../src/templates/contract.js';
import { tempDir } from '../helpers/git-repo.js';

// The model call is the boundary here: `ask` is a scripted function. The real `claude -p` path is
// covered by test/e2e/supervisor.test.ts.

const TASK = 'write the parser\nand "test" it';
const STARTED = 1_700_000_000_000;
const NO_MARKER =
  'Your previous answer had no marker. Start your answer with [COMPLETE], [ABORT] or [CONTINUE].';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** One scripted answer: a string is a successful call with that output. */
type Scripted = string | { error: string };

function setup(
  script: Scripted[] | ((prompt: string, n: number) => Promise<ModelReply>) = [],
  options: { config?: Partial<SupervisorConfig> } & Partial<Omit<SupervisorOptions, 'config'>> = {},
) {
  const dir = tempDir('agentbox-supervisor-');
  dirs.push(dir);
  const log = new EventLog(dir);
  const prompts: string[] = [];
  const ends: SupervisorEnd[] = [];
  const ask = async (prompt: string): Promise<ModelReply> => {
    prompts.push(prompt);
    if (typeof script === 'function') return script(prompt, prompts.length);
    const next = script[prompts.length - 1];
    if (next === undefined) throw new Error(`unscripted ask #${prompts.length}`);
    return typeof next === 'string'
      ? { ok: true, output: next, durationMs: 7 }
      : { ok: false, error: next.error, durationMs: 7 };
  };
  const { config, ...rest } = options;
  const supervisor = new Supervisor({
    config: { mode: 'claude', maxIterations: 50, loopLimit: 3, ...config },
    task: TASK,
    runType: 'scout',
    runDir: dir,
    log,
    startedAt: STARTED,
    now: () => STARTED + 125_000,
    ask,
    onEnd: (end) => ends.push(end),
    ...rest,
  });
  /** The Stop decisions in events.jsonl, read back from disk. */
  const stops = () => log.read().filter((e) => e.event === 'Stop');
  return { dir, log, supervisor, prompts, ends, stops };
}

const stopInput = (over: HookInput = {}): HookInput => ({
  hook_event_name: 'Stop',
  session_id: 'session-1',
  stop_hook_active: false,
  last_assistant_message: 'I am done.',
  ...over,
});
const blocked = stopInput({ stop_hook_active: true });
const toolUse = (name: string, input: unknown, response: unknown = 'ok'): HookInput => ({
  hook_event_name: 'PostToolUse',
  tool_name: name,
  tool_input: input,
  tool_response: response,
});
const block = (reason: string) => ({ decision: 'block', reason });

describe('Supervisor in mode claude', () => {
  it('[CONTINUE] blocks the Stop with exactly the text', async () => {
    const raw =
      'The tests are missing.\n```\n[CONTINUE] Add a test for:\n  - empty input\n  - "quoted" input\n```';
    const { supervisor, prompts, ends, stops } = setup([raw]);
    const answer = await supervisor.onEvent('Stop', stopInput());
    expect(answer).toEqual(block('Add a test for:\n  - empty input\n  - "quoted" input'));
    expect(supervisor.end).toBeNull();
    expect(ends).toEqual([]);
    expect(supervisor.iterations).toBe(1);
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain(`<task>\n${TASK}\n</task>`);
    expect(prompts[0]).toContain('Iteration 1/50');
    expect(prompts[0]).toContain('Elapsed: 2m 5s');
    expect(prompts[0]).toContain('<message>\nI am done.\n</message>');
    expect(stops()).toEqual([
      {
        ts: expect.any(String),
        event: 'Stop',
        iteration: 1,
        max_iterations: 50,
        stop_hook_active: false,
        source: 'claude',
        prompt: prompts[0],
        raw,
        attempt: 1,
        duration_ms: 7,
        decision: 'continue',
        text: 'Add a test for:\n  - empty input\n  - "quoted" input',
      },
    ]);
  });

  it('[COMPLETE] lets the agent stop and ends the run complete', async () => {
    const { supervisor, prompts, ends, stops } = setup([
      'Looks right.\n**[COMPLETE]** parser and test written',
    ]);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    const end = { kind: 'complete', summary: 'parser and test written' };
    expect(supervisor.end).toEqual(end);
    expect(ends).toEqual([end]);
    expect(stops()).toEqual([
      expect.objectContaining({
        event: 'Stop',
        iteration: 1,
        decision: 'complete',
        source: 'claude',
        reason: 'parser and test written',
        prompt: prompts[0],
        raw: 'Looks right.\n**[COMPLETE]** parser and test written',
      }),
    ]);
  });

  it('[ABORT] lets the agent stop and ends the run with agent_abort', async () => {
    const { supervisor, prompts, ends, stops } = setup(['[ABORT] it deleted the test suite']);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    const end = { kind: 'abort', failure: 'agent_abort', reason: 'it deleted the test suite' };
    expect(supervisor.end).toEqual(end);
    expect(ends).toEqual([end]);
    expect(stops()).toEqual([
      expect.objectContaining({
        decision: 'abort',
        source: 'claude',
        reason: 'it deleted the test suite',
        prompt: prompts[0],
        raw: '[ABORT] it deleted the test suite',
      }),
    ]);
  });

  it('[ABORT] with no reason still gives the run one', async () => {
    const { supervisor } = setup(['[ABORT]']);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(supervisor.end).toEqual({
      kind: 'abort',
      failure: 'agent_abort',
      reason: 'the supervisor aborted the run',
    });
  });

  it('three answers without a marker end the run (supervisor) after exactly 3 asks', async () => {
    const raws = ['I think it is fine.', 'COMPLETE: yes', '[CONTINUE]'];
    const { supervisor, prompts, ends, stops } = setup(raws);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts).toHaveLength(3);
    // The retries are the same prompt plus a note that the previous answer had no marker.
    expect(prompts[0]).not.toContain(NO_MARKER);
    expect(prompts[1]).toBe(`${prompts[0]}\n\n${NO_MARKER}`);
    expect(prompts[2]).toBe(prompts[1]);
    const reason = 'the supervisor answered 3 times without a decision marker';
    expect(supervisor.end).toEqual({ kind: 'abort', failure: 'supervisor', reason });
    expect(ends).toHaveLength(1);
    expect(stops()).toEqual([
      ...raws.map((raw, i) =>
        expect.objectContaining({
          iteration: 1,
          decision: 'none',
          source: 'claude',
          attempt: i + 1,
          prompt: prompts[i],
          raw,
          reason: 'no [COMPLETE], [ABORT] or [CONTINUE] marker',
        }),
      ),
      expect.objectContaining({ iteration: 1, decision: 'abort', source: 'rules', reason, warning: true }),
    ]);
  });

  it('an answer without a marker, then one with: the second decides', async () => {
    const { supervisor, prompts, stops } = setup(['hmm', '[CONTINUE] run the tests']);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual(block('run the tests'));
    expect(prompts).toHaveLength(2);
    expect(prompts[1]!.endsWith(NO_MARKER)).toBe(true);
    expect(stops().map((e) => [e.decision, e.attempt])).toEqual([
      ['none', 1],
      ['continue', 2],
    ]);
    expect(supervisor.end).toBeNull();
  });

  it('the number of attempts is configurable', async () => {
    const { supervisor, prompts } = setup(['a', 'b', 'c', 'd', 'e'], { attempts: 5 });
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts).toHaveLength(5);
    expect(supervisor.end).toMatchObject({ kind: 'abort', failure: 'supervisor' });
  });

  it('a failed call falls back to the rules: the stop stands, recorded as fallback', async () => {
    const { supervisor, prompts, ends, stops } = setup([{ error: 'timed out after 1000 ms' }]);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    const reason =
      "supervisor call failed (timed out after 1000 ms); fell back to the rules: the agent's stop stands";
    expect(supervisor.end).toEqual({ kind: 'complete', summary: reason });
    expect(ends).toHaveLength(1);
    expect(stops()).toEqual([
      expect.objectContaining({
        iteration: 1,
        decision: 'complete',
        source: 'fallback',
        reason,
        error: 'timed out after 1000 ms',
        prompt: prompts[0],
        attempt: 1,
      }),
    ]);
  });

  it('a failed retry falls back too', async () => {
    const { supervisor, prompts, stops } = setup(['no marker here', { error: 'exit code 1' }]);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts).toHaveLength(2);
    expect(stops().map((e) => [e.decision, e.source, e.attempt])).toEqual([
      ['none', 'claude', 1],
      ['complete', 'fallback', 2],
    ]);
  });

  it('no model configured falls back', async () => {
    const { supervisor, stops } = setup([], { ask: undefined });
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(stops()).toEqual([
      expect.objectContaining({
        decision: 'complete',
        source: 'fallback',
        error: 'no supervisor model configured',
      }),
    ]);
  });
});

describe('Supervisor in modes rules and off', () => {
  it('rules: the agent decides; the model is never asked', async () => {
    const { supervisor, prompts, stops } = setup([], { config: { mode: 'rules' } });
    await supervisor.onEvent('PostToolUse', toolUse('Read', { file_path: 'a.ts' }));
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts).toEqual([]);
    const reason = 'the agent finished and no rule objects';
    expect(supervisor.end).toEqual({ kind: 'complete', summary: reason });
    expect(stops()).toEqual([
      {
        ts: expect.any(String),
        event: 'Stop',
        iteration: 1,
        max_iterations: 50,
        stop_hook_active: false,
        decision: 'complete',
        source: 'rules',
        reason,
      },
    ]);
  });

  it('off: the agent decides, even with subagents running; the model is never asked', async () => {
    const { supervisor, prompts, stops } = setup([], { config: { mode: 'off' } });
    await supervisor.onEvent('PreToolUse', { tool_name: 'Task', tool_input: {} });
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts).toEqual([]);
    expect(supervisor.end).toEqual({ kind: 'complete', summary: 'supervisor off' });
    expect(stops()).toEqual([
      expect.objectContaining({ decision: 'complete', source: 'rules', reason: 'supervisor off' }),
    ]);
  });
});

describe('Supervisor rules across Stops', () => {
  it('the iteration budget: at the Stop that reaches maxIterations a CONTINUE becomes a hard stop', async () => {
    const s = setup(
      (_p, n) => Promise.resolve({ ok: true, output: `[CONTINUE] go on ${n}`, durationMs: 1 }),
      {
        config: { maxIterations: 4 },
      },
    );
    const answers = [];
    for (let i = 0; i < 4; i++) {
      await s.supervisor.onEvent('PostToolUse', toolUse('Bash', { command: `step ${i}` }));
      answers.push(await s.supervisor.onEvent('Stop', i === 0 ? stopInput() : blocked));
    }
    expect(answers).toEqual([block('go on 1'), block('go on 2'), block('go on 3'), {}]);
    // The last Stop still asks (a [COMPLETE] there would end the run DONE), but may not continue.
    expect(s.prompts).toHaveLength(4);
    expect(s.prompts.map((p) => /Iteration (\d+\/\d+)/.exec(p)?.[1])).toEqual(['1/4', '2/4', '3/4', '4/4']);
    const reason = 'iteration budget reached (4/4): the supervisor wanted more work (go on 4)';
    expect(s.supervisor.end).toEqual({ kind: 'abort', failure: 'budget', reason });
    expect(s.ends).toHaveLength(1);
    expect(s.stops().map((e) => [e.iteration, e.decision, e.source])).toEqual([
      [1, 'continue', 'claude'],
      [2, 'continue', 'claude'],
      [3, 'continue', 'claude'],
      [4, 'abort', 'claude'],
    ]);
    expect(s.stops()[3]).toMatchObject({ reason, warning: true, max_iterations: 4, stop_hook_active: true });
  });

  it('the iteration budget: a [COMPLETE] at the last Stop ends the run normally', async () => {
    const s = setup(['[CONTINUE] one more', '[COMPLETE] all done'], { config: { maxIterations: 2 } });
    await s.supervisor.onEvent('PostToolUse', toolUse('Bash', { command: 'a' }));
    expect(await s.supervisor.onEvent('Stop', stopInput())).toEqual(block('one more'));
    await s.supervisor.onEvent('PostToolUse', toolUse('Bash', { command: 'b' }));
    expect(await s.supervisor.onEvent('Stop', blocked)).toEqual({});
    expect(s.supervisor.end).toEqual({ kind: 'complete', summary: 'all done' });
  });

  it('the loop guard: blocked Stops in a row with no tool call between them end the run', async () => {
    const s = setup((_p, n) =>
      Promise.resolve({ ok: true, output: `[CONTINUE] try again ${n}`, durationMs: 1 }),
    );
    const answers = [await s.supervisor.onEvent('Stop', stopInput())];
    for (let i = 0; i < 3; i++) answers.push(await s.supervisor.onEvent('Stop', blocked));
    expect(answers).toEqual([block('try again 1'), block('try again 2'), block('try again 3'), {}]);
    expect(s.prompts).toHaveLength(3);
    const reason = 'loop guard: the agent stopped 3 times in a row without doing anything';
    expect(s.supervisor.end).toEqual({ kind: 'abort', failure: 'supervisor', reason });
    expect(s.stops().map((e) => [e.iteration, e.stop_hook_active, e.decision, e.source])).toEqual([
      [1, false, 'continue', 'claude'],
      [2, true, 'continue', 'claude'],
      [3, true, 'continue', 'claude'],
      [4, true, 'abort', 'rules'],
    ]);
    expect(s.stops()[3]).toMatchObject({ reason, warning: true });
  });

  it('the loop guard: a tool call between blocked Stops starts the count again', async () => {
    const s = setup((_p, n) => Promise.resolve({ ok: true, output: `[CONTINUE] again ${n}`, durationMs: 1 }));
    await s.supervisor.onEvent('Stop', stopInput());
    const answers = [];
    for (let i = 0; i < 8; i++) {
      // Two idle blocked Stops, then a tool call: never three idle in a row.
      if (i % 2 === 0) await s.supervisor.onEvent('PostToolUseFailure', { tool_name: 'Bash', error: 'x' });
      answers.push(await s.supervisor.onEvent('Stop', blocked));
    }
    expect(answers.every((a) => a?.decision === 'block')).toBe(true);
    expect(s.supervisor.end).toBeNull();
    expect(s.prompts).toHaveLength(9);
  });

  it('a Task whose call has not returned makes the Stop wait; its PostToolUse releases it', async () => {
    const s = setup(['[COMPLETE] done']);
    expect(await s.supervisor.onEvent('PreToolUse', { tool_name: 'Task', tool_input: { prompt: 'x' } })).toBe(
      undefined,
    );
    const text =
      '1 subagent(s) still running: wait for it to finish and check the results before you finish.';
    expect(await s.supervisor.onEvent('Stop', stopInput())).toEqual(block(text));
    expect(s.prompts).toEqual([]);
    expect(s.supervisor.end).toBeNull();
    expect(s.stops()).toEqual([
      expect.objectContaining({
        iteration: 1,
        decision: 'continue',
        source: 'rules',
        reason: 'background work running',
        text,
      }),
    ]);
    await s.supervisor.onEvent('SubagentStop', { hook_event_name: 'SubagentStop' });
    await s.supervisor.onEvent('PostToolUse', toolUse('Task', { prompt: 'x' }, 'the subagent found it'));
    expect(await s.supervisor.onEvent('Stop', blocked)).toEqual({});
    expect(s.prompts).toHaveLength(1);
    expect(s.supervisor.end).toEqual({ kind: 'complete', summary: 'done' });
    expect(s.log.read().filter((e) => e.event === 'SubagentStop')).toHaveLength(1);
  });

  it('counts Agent subagents too, and background tasks from the Stop input', async () => {
    const s = setup([]);
    await s.supervisor.onEvent('PreToolUse', { tool_name: 'Agent', tool_input: {} });
    await s.supervisor.onEvent('PreToolUse', { tool_name: 'Agent', tool_input: {} });
    await s.supervisor.onEvent('PreToolUse', { tool_name: 'Bash', tool_input: {} });
    expect(await s.supervisor.onEvent('Stop', stopInput({ background_tasks: [{ id: 'b1' }] }))).toEqual(
      block(
        '1 background task(s) and 2 subagent(s) still running: wait for them to finish and check the results before you finish.',
      ),
    );
    expect(s.prompts).toEqual([]);
  });

  it('a refused or failed subagent call does not leave the count stuck, and it never goes below zero', async () => {
    const s = setup(['[COMPLETE] ok']);
    await s.supervisor.onEvent('PostToolUseFailure', {
      tool_name: 'Task',
      tool_input: {},
      error: 'never started',
    });
    await s.supervisor.onEvent('PreToolUse', { tool_name: 'Task', tool_input: {} });
    await s.supervisor.onEvent('PostToolUseFailure', { tool_name: 'Task', tool_input: {}, error: 'refused' });
    expect(await s.supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(s.prompts).toHaveLength(1);
  });
});

describe('Supervisor history', () => {
  it('PostToolUse and PostToolUseFailure build the history shown in the next prompt', async () => {
    const s = setup(['[CONTINUE] fix the failing test', '[COMPLETE] ok']);
    expect(
      await s.supervisor.onEvent(
        'PostToolUse',
        toolUse('Read', { file_path: 'src/a.ts' }, 'export const a = 1;'),
      ),
    ).toBe(undefined);
    await s.supervisor.onEvent('PostToolUseFailure', {
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      error: 'exit code 1\n2 tests failed',
    });
    await s.supervisor.onEvent('Stop', stopInput());
    const lines = (p: string) => p.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(lines(s.prompts[0]!)).toEqual([
      '1. Read [OK] {"file_path":"src/a.ts"} → "export const a = 1;"',
      '2. Bash [ERROR] {"command":"npm test"} → exit code 1 2 tests failed',
    ]);
    // The history goes on across Stops.
    await s.supervisor.onEvent('PostToolUse', toolUse('Edit', { file_path: 'src/a.ts' }, { ok: true }));
    await s.supervisor.onEvent('Stop', blocked);
    expect(lines(s.prompts[1]!)).toEqual([
      ...lines(s.prompts[0]!),
      '3. Edit [OK] {"file_path":"src/a.ts"} → {"ok":true}',
    ]);
    expect(s.supervisor.history.map((t) => [t.name, t.ok])).toEqual([
      ['Read', true],
      ['Bash', false],
      ['Edit', true],
    ]);
    // Each tool call is in events.jsonl with its outcome and excerpt.
    expect(s.log.read().filter((e) => String(e.event).startsWith('PostToolUse'))).toEqual([
      expect.objectContaining({ event: 'PostToolUse', tool: 'Read', ok: true }),
      expect.objectContaining({
        event: 'PostToolUseFailure',
        tool: 'Bash',
        ok: false,
        excerpt: '{"command":"npm test"} → exit code 1 2 tests failed',
      }),
      expect.objectContaining({ event: 'PostToolUse', tool: 'Edit', ok: true }),
    ]);
  });

  it('keeps the last 50 tool calls, and the prompt shows the last 15', async () => {
    const s = setup(['[COMPLETE] ok']);
    for (let i = 1; i <= 60; i++) await s.supervisor.onEvent('PostToolUse', toolUse(`T${i}`, { i }));
    expect(s.supervisor.history).toHaveLength(50);
    expect(s.supervisor.history[0]!.name).toBe('T11');
    await s.supervisor.onEvent('Stop', stopInput());
    const lines = s.prompts[0]!.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(lines).toHaveLength(15);
    expect(lines[0]).toBe('1. T46 [OK] {"i":46} → "ok"');
    expect(lines[14]).toBe('15. T60 [OK] {"i":60} → "ok"');
  });

  it('logs other events with their session, source and reason', async () => {
    const s = setup([]);
    expect(
      await s.supervisor.onEvent('SessionStart', { session_id: 'session-1', source: 'startup', extra: 'x' }),
    ).toBe(undefined);
    await s.supervisor.onEvent('SessionEnd', { session_id: 'session-1', reason: 'exit' });
    expect(s.log.read()).toEqual([
      { ts: expect.any(String), event: 'SessionStart', session_id: 'session-1', source: 'startup' },
      { ts: expect.any(String), event: 'SessionEnd', session_id: 'session-1', reason: 'exit' },
    ]);
  });
});

describe('Supervisor concurrency and the inbox', () => {
  it('two Stops fired at once are decided one after the other', async () => {
    const calls: { prompt: string; release: (output: string) => void }[] = [];
    let active = 0;
    let maxActive = 0;
    const s = setup(
      (prompt) =>
        new Promise<ModelReply>((resolve) => {
          active++;
          maxActive = Math.max(maxActive, active);
          calls.push({
            prompt,
            release: (output) => {
              active--;
              resolve({ ok: true, output, durationMs: 1 });
            },
          });
        }),
    );
    const first = s.supervisor.onEvent('Stop', stopInput({ last_assistant_message: 'first stop' }));
    const second = s.supervisor.onEvent('Stop', stopInput({ last_assistant_message: 'second stop' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The second decision has not started while the first waits for its model.
    expect(calls).toHaveLength(1);
    expect(s.stops()).toEqual([]);
    calls[0]!.release('[CONTINUE] one');
    expect(await first).toEqual(block('one'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(2);
    calls[1]!.release('[CONTINUE] two');
    expect(await second).toEqual(block('two'));
    expect(maxActive).toBe(1);
    expect(calls[0]!.prompt).toContain('Iteration 1/50');
    expect(calls[0]!.prompt).toContain('first stop');
    expect(calls[1]!.prompt).toContain('Iteration 2/50');
    expect(calls[1]!.prompt).toContain('second stop');
    expect(s.stops().map((e) => [e.iteration, e.text])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
  });

  it('many Stops at once: iterations in order, each exactly once', async () => {
    const s = setup(async (prompt) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      return { ok: true, output: `[CONTINUE] ${/Iteration (\d+)/.exec(prompt)?.[1]}`, durationMs: 1 };
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.supervisor.onEvent('Stop', stopInput({ last_assistant_message: `m${i}` })),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => block(String(i + 1))));
    expect(s.stops().map((e) => e.iteration)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(s.supervisor.iterations).toBe(20);
  });

  it('a failing decision does not block the ones after it', async () => {
    const s = setup(async (_prompt, n) => {
      if (n === 1) throw new Error('model crashed');
      return { ok: true, output: '[CONTINUE] next', durationMs: 1 };
    });
    const first = s.supervisor.onEvent('Stop', stopInput());
    const second = s.supervisor.onEvent('Stop', stopInput());
    await expect(first).rejects.toThrow('model crashed');
    expect(await second).toEqual(block('next'));
  });

  it.each(['claude', 'rules', 'off'] as const)(
    'mode %s: injected messages are delivered at the next Stop, as one block, in order, once',
    async (mode) => {
      const s = setup(['[CONTINUE] carry on'], { config: { mode } });
      const ids = [enqueue(s.dir, 'also check b.ts'), enqueue(s.dir, 'and then\nrun the tests')];
      expect(pendingCount(s.dir)).toBe(2);
      const text = 'also check b.ts\n\nand then\nrun the tests';
      expect(await s.supervisor.onEvent('Stop', stopInput())).toEqual(block(text));
      expect(s.prompts).toEqual([]);
      expect(pendingCount(s.dir)).toBe(0);
      expect(s.supervisor.end).toBeNull();
      expect(s.stops()).toEqual([
        {
          ts: expect.any(String),
          event: 'Stop',
          iteration: 1,
          max_iterations: 50,
          stop_hook_active: false,
          decision: 'inject',
          source: 'inbox',
          messages: ids,
          text,
        },
      ]);
      // Delivered once: the next Stop is decided as usual.
      await s.supervisor.onEvent('PostToolUse', toolUse('Read', { file_path: 'b.ts' }));
      const next = await s.supervisor.onEvent('Stop', blocked);
      expect(next).toEqual(mode === 'claude' ? block('carry on') : {});
      expect(s.stops()).toHaveLength(2);
      expect(s.stops()[1]).toMatchObject({ iteration: 2, source: mode === 'claude' ? 'claude' : 'rules' });
      expect(JSON.stringify(s.stops()[1])).not.toContain('also check b.ts');
    },
  );

  it('a message queued while a decision is running goes to the Stop after it', async () => {
    let release: (() => void) | undefined;
    const s = setup(
      () =>
        new Promise<ModelReply>((resolve) => {
          release = () => resolve({ ok: true, output: '[CONTINUE] first answer', durationMs: 1 });
        }),
    );
    const first = s.supervisor.onEvent('Stop', stopInput());
    await new Promise((resolve) => setTimeout(resolve, 20));
    enqueue(s.dir, 'late message');
    const second = s.supervisor.onEvent('Stop', blocked);
    release!();
    expect(await first).toEqual(block('first answer'));
    expect(await second).toEqual(block('late message'));
    expect(s.stops().map((e) => [e.iteration, e.decision])).toEqual([
      [1, 'continue'],
      [2, 'inject'],
    ]);
  });
});

describe('Supervisor in an interactive session', () => {
  const prompt = (text: string): HookInput => ({ hook_event_name: 'UserPromptSubmit', prompt: text });

  it('each message the person sends is a new task: the budget starts again and the model sees that message', async () => {
    const { supervisor, prompts, ends } = setup(['[CONTINUE] more', '[COMPLETE] ok', '[COMPLETE] fine'], {
      runType: 'interactive',
      config: { maxIterations: 2 },
    });
    await supervisor.onEvent('UserPromptSubmit', prompt('rename the module'));
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual(block('more'));
    expect(await supervisor.onEvent('Stop', blocked)).toEqual({});
    expect(ends).toEqual([{ kind: 'complete', summary: 'ok' }]);
    expect(prompts[0]).toContain('rename the module');
    expect(prompts[0]).not.toContain('write the parser');

    // Without the reset the third Stop would be over the budget of 2.
    await supervisor.onEvent('UserPromptSubmit', prompt('now the docs'));
    expect(supervisor.end).toBeNull();
    expect(supervisor.iterations).toBe(0);
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    expect(prompts[2]).toContain('now the docs');
    expect(prompts[2]).toContain('Iteration 1/2');
  });

  it('in a headless run a UserPromptSubmit changes nothing', async () => {
    const { supervisor, prompts } = setup(['[CONTINUE] more']);
    await supervisor.onEvent('UserPromptSubmit', prompt('something else'));
    await supervisor.onEvent('Stop', stopInput());
    expect(prompts[0]).toContain('write the parser');
  });
});

describe('Supervisor.close: the run ended while a Stop was being decided (issue 38 item 10)', () => {
  /** Resolves like a killed call or command once `signal` is aborted; `started` is told first. */
  const untilAborted = <T>(signal: AbortSignal, started: () => void, value: T) =>
    new Promise<T>((resolve) => {
      started();
      signal.addEventListener('abort', () => setTimeout(() => resolve(value), 20), { once: true });
    });
  const checks = (verify: NonNullable<SupervisorOptions['checks']>['verify']) => ({
    answer: null,
    verify,
    actions: DEFAULT_ACTIONS,
    maxCorrections: 2,
    failOnViolation: false,
    enforce: true,
    requiredSections: [],
  });

  it.each([
    ['its verification', 'rules' as const],
    ['its model call', 'claude' as const],
  ])('%s is ended, nothing of it is logged, and no later Stop is decided', async (_label, mode) => {
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { supervisor, stops, log, ends } = setup([], {
      config: { mode },
      ask: (_prompt, signal) => untilAborted(signal, started, { ok: false, error: 'killed', durationMs: 1 }),
      ...(mode === 'rules'
        ? { checks: checks((signal) => untilAborted(signal, started, { ok: false, detail: 'stopped' })) }
        : {}),
    });
    const answer = supervisor.onEvent('Stop', stopInput());
    await running;
    await supervisor.close();
    expect(await answer).toEqual({});
    expect(await supervisor.onEvent('Stop', stopInput())).toEqual({});
    await supervisor.onEvent('SessionEnd', { hook_event_name: 'SessionEnd', reason: 'other' });
    expect(stops()).toEqual([]);
    expect(log.read()).toEqual([]);
    expect(ends).toEqual([]);
    expect(supervisor.checkRecord).toEqual({ violations: 0, corrections: 0, verify: null });
    await supervisor.close();
  });
});

describe('a failing runs.verify (issue 38 item 6)', () => {
  const verifyChecks = (actions = DEFAULT_ACTIONS) => ({
    answer: null,
    verify: async () => ({ ok: false, detail: '`npm test` failed (exit code 1)' }),
    actions,
    maxCorrections: 2,
    failOnViolation: false,
    enforce: true,
    requiredSections: [],
  });

  it('is reported as verify_failed, not as a skipped validation', async () => {
    const { supervisor, log } = setup([], { config: { mode: 'rules' }, checks: verifyChecks() });
    await supervisor.onEvent('Stop', stopInput());
    expect(log.read().filter((e) => e.event === 'violation')).toEqual([
      expect.objectContaining({ type: 'verify_failed', action: 'correct', correction: 1 }),
    ]);
  });

  it('configured major, it ends the run with "Supervisor violation: verify_failed"', async () => {
    const { supervisor, ends } = setup([], {
      config: { mode: 'rules' },
      checks: verifyChecks({ ...DEFAULT_ACTIONS, verify_failed: 'fail' }),
    });
    await supervisor.onEvent('Stop', stopInput());
    expect(ends).toEqual([
      { kind: 'abort', failure: 'violation', reason: 'Supervisor violation: verify_failed' },
    ]);
  });
});
