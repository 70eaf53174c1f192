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
      // The refusal is then recorded in the run found further up.
      'an agent that cleared its own environment (env -i)',
      {},
      agent([]),
      { what: 'agentbox run 26-01-01_0000__x__abc123', run: '26-01-01_0000__x__abc123' },
    ],
    [
      'an agent that removed only the run variables (env -u AGENTBOX_RUN -u AGENTBOX_RUN_DIR)',
      { AGENTBOX_PROCESS_MARK: 'f00d' },
      tree({
        100: [30, ['AGENTBOX_PROCESS_MARK=f00d']],
        30: [20, ['AGENTBOX_RUN=r1', 'AGENTBOX_RUN_DIR=/wt/.agentbox-run', 'AGENTBOX_PROCESS_MARK=f00d']],
        20: [1, []],
      }),
      { what: 'agentbox run r1', run: 'r1', runDir: '/wt/.agentbox-run' },
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

  describe("inside Claude Code's sandbox (environments unreadable, bwrap is pid 1)", () => {
    const bwrap = (tmpdir: string) => [
      'bwrap',
      '--new-session',
      '--setenv',
      'SANDBOX_RUNTIME',
      '1',
      '--setenv',
      'TMPDIR',
      tmpdir,
      '--ro-bind',
      '/',
      '/',
    ];
    const sandbox = (argv: string[]): ProcReader => ({
      ppid: (pid) => ({ 3: 2, 2: 1, 1: 0 })[pid] ?? null,
      environ: () => null,
      cmdline: (pid) => (pid === 1 ? argv : ['bash']),
    });
    it.each([
      [
        "an agentbox run's sandbox names the run",
        bwrap('/tmp/agentbox-0/work/26-01-01_0000__x__abc123/tmp'),
        { what: 'the sandbox of agentbox run 26-01-01_0000__x__abc123', run: '26-01-01_0000__x__abc123' },
      ],
      [
        'another Claude Code sandbox',
        bwrap('/tmp/claude'),
        { what: "a command in Claude Code's sandbox", run: null },
      ],
      ['a bwrap that is not Claude Code’s (e.g. flatpak)', ['bwrap', '--ro-bind', '/', '/'], null],
      ['a SANDBOX_RUNTIME not set by bwrap', ['sh', '--setenv', 'SANDBOX_RUNTIME', '1'], null],
    ])('%s', (_, argv, expected) => {
      expect(insideRun({}, 3, sandbox(argv))).toEqual(expected);
    });
  });

  it('stops at a loop in a broken process table', () => {
    expect(insideRun({}, 100, tree({ 100: [30, []], 30: [31, []], 31: [30, []] }))).toBeNull();
  });
});
