import { describe, expect, it } from 'vitest';
import { insideRun, type ProcReader } from '../../src/airlock/inside.js';

/** A process tree as data: pid → [ppid, environment]. */
function tree(procs: Record<number, [number, string[]]>): ProcReader {
  return {
    ppid: (pid) => procs[pid]?.[0] ?? null,
    environ: (pid) => procs[pid]?.[1] ?? null,
  };
}

describe('insideRun: the human gate judged from what an agent cannot undo', () => {
  const human = tree({ 100: [50, ['PATH=/bin']], 50: [1, ['HOME=/home/me']] });
  // claude (pid 20, started by agentbox with AGENTBOX_RUN) → bash (30, CLAUDECODE=1) → agentbox (100)
  const agent = (selfEnv: string[]) =>
    tree({
      100: [30, selfEnv],
      30: [20, ['CLAUDECODE=1', 'PATH=/bin']],
      20: [10, ['AGENTBOX_RUN=26-01-01_0000__x__abc123', 'AGENTBOX_PROCESS_MARK=f00d']],
      10: [1, ['HOME=/home/me']],
    });

  it.each([
    ['a person in a terminal', {}, human, null],
    [
      'an agent, environment intact',
      { AGENTBOX_RUN: '26-01-01_0000__x__abc123' },
      agent([]),
      { what: 'agentbox run 26-01-01_0000__x__abc123', run: '26-01-01_0000__x__abc123' },
    ],
    [
      'an agent that cleared its own environment (env -i)',
      {},
      agent([]),
      { what: 'a Claude Code session', run: null },
    ],
    [
      'a Claude Code session that is no agentbox run',
      {},
      tree({ 100: [30, []], 30: [1, ['CLAUDECODE=1']] }),
      { what: 'a Claude Code session', run: null },
    ],
    [
      'a run’s process two levels up (a script the agent started)',
      {},
      tree({ 100: [40, []], 40: [20, []], 20: [1, ['AGENTBOX_PROCESS_MARK=f00d']] }),
      { what: 'a process started by an agentbox run', run: null },
    ],
    ['an ancestor whose environment cannot be read', {}, tree({ 100: [30, []], 30: [1, []] }), null],
  ])('%s', (_, env, reader, expected) => {
    expect(insideRun(env, 100, reader)).toEqual(expected);
  });

  it('stops at a loop in a broken process table', () => {
    expect(insideRun({}, 100, tree({ 100: [30, []], 30: [31, []], 31: [30, []] }))).toBeNull();
  });
});
