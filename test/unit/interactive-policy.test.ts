import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY,
  type ExitRecord,
  INITIAL_MEMORY,
  onExit,
  onManualRestart,
  type PolicyMemory,
} from '../../src/interactive/policy.js';

const crash = (at: number, code = 1): ExitRecord => ({ at, code, signal: null });
const clean = (at: number): ExitRecord => ({ at, code: 0, signal: null });

/** Feeds exits in order (each process started `upFor` ms before it exited); returns every step. */
function feed(exits: ExitRecord[], upFor = 100, memory: PolicyMemory = INITIAL_MEMORY) {
  const steps: ReturnType<typeof onExit>[] = [];
  for (const exit of exits) {
    const step = onExit(DEFAULT_POLICY, memory, exit, exit.at - upFor);
    steps.push(step);
    memory = step.memory;
  }
  return steps;
}

describe('the crash-restart policy', () => {
  it('a clean exit asks the person and resets the failure count', () => {
    const [first, second] = feed([crash(1000), clean(5000)]);
    expect(first!.action).toEqual({ kind: 'restart', delayMs: 2000, mode: 'resume' });
    expect(second!.action).toEqual({ kind: 'ask' });
    expect(second!.memory).toMatchObject({ state: 'healthy', consecutiveFailures: 0 });
  });

  it('crashes go transient (2 s), flapping from the 3rd in 60 s (30 s), and halt at the 5th in a row', () => {
    const steps = feed([crash(1000), crash(4000), crash(7000), crash(40_000), crash(72_000)]);
    expect(steps.map((s) => s.memory.state)).toEqual([
      'transient',
      'transient',
      'flapping',
      'flapping',
      'halted',
    ]);
    expect(steps.map((s) => (s.action.kind === 'restart' ? s.action.delayMs : s.action.kind))).toEqual([
      2000,
      2000,
      30_000,
      30_000,
      'halt',
    ]);
    expect(steps[4]!.action).toEqual({ kind: 'halt', message: 'claude failed 5 times in a row' });
    expect(steps.map((s) => s.memory.restarts)).toEqual([1, 2, 3, 4, 4]);
  });

  it('crashes spread over more than the window are transient, not flapping', () => {
    const steps = feed([crash(0), crash(61_000), crash(122_000)]);
    expect(steps.map((s) => s.memory.state)).toEqual(['transient', 'transient', 'transient']);
  });

  it('a kill by signal is a crash', () => {
    const [step] = feed([{ at: 10, code: null, signal: 'SIGKILL' }]);
    expect(step!.memory.state).toBe('transient');
  });

  it('a claude that stayed up longer than the window starts the consecutive count afresh', () => {
    const early = feed([crash(1000), crash(2000), crash(3000), crash(4000)]);
    expect(early.at(-1)!.memory.consecutiveFailures).toBe(4);
    const [late] = feed([crash(200_000)], 120_000, early.at(-1)!.memory);
    expect(late!.memory.consecutiveFailures).toBe(1);
    expect(late!.action.kind).toBe('restart');
  });

  it('keeps only the last 10 exits', () => {
    const exits = Array.from({ length: 14 }, (_, i) => (i % 2 ? clean(i * 1000) : crash(i * 1000)));
    const steps = feed(exits);
    expect(steps.at(-1)!.memory.exits).toHaveLength(10);
    expect(steps.at(-1)!.memory.exits[0]!.at).toBe(4000);
  });

  it('a restart the person asks for clears the failure count and counts as a restart', () => {
    const [step] = feed([crash(1000)]);
    const after = onManualRestart(step!.memory);
    expect(after).toMatchObject({ state: 'healthy', consecutiveFailures: 0, restarts: 2 });
  });

  it('timings and thresholds come from the config', () => {
    const config = {
      ...DEFAULT_POLICY,
      transientDelayMs: 5,
      flappingDelayMs: 7,
      flapThreshold: 2,
      haltAfter: 3,
    };
    let memory = INITIAL_MEMORY;
    const actions = [1, 2, 3].map((at) => {
      const step = onExit(config, memory, crash(at), at);
      memory = step.memory;
      return step.action;
    });
    expect(actions).toEqual([
      { kind: 'restart', delayMs: 5, mode: 'resume' },
      { kind: 'restart', delayMs: 7, mode: 'resume' },
      { kind: 'halt', message: 'claude failed 3 times in a row' },
    ]);
  });
});
