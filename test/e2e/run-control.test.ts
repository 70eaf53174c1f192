import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, hang, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { sleep, startPty, waitFor } from '../helpers/pty.js';

/** Issue 14, run control as a person lives with it: the live line, piped output. */
describe('run control', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('the live line ticks while the model thinks, and names the tool and its target while one runs', async () => {
    const task = 'TASK-LIVE slow model';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash('sleep 3 && echo slept') },
      { when: { anyText: task, turn: 1 }, reply: { text: 'done thinking', delayMs: 3500 } },
    ]);
    const s = startPty(['scout', task], { cwd: p.repo.dir, env: p.env, cols: 120 });
    expect(await s.exited).toBe(0);
    const out = s.output();
    // During the 3 s command: its name and target, with its own clock going up.
    const running = [...out.matchAll(/Bash sleep 3 && echo slept · (\d+)s/g)].map((m) => Number(m[1]));
    expect(new Set(running).size).toBeGreaterThanOrEqual(2);
    // During the 3.5 s model turn, with no stream line at all: the clock still moves.
    const waiting = [...out.matchAll(/waiting for the model · (\d+)s/g)].map((m) => Number(m[1]));
    expect(new Set(waiting).size).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('piped output prints a plain line per tool call', async () => {
    const task = 'TASK-PIPED two commands';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash('echo one') },
      { when: { anyText: task, turn: 1 }, reply: bash('echo two') },
      { when: { anyText: task }, reply: text('done') },
    ]);
    const result = await p.agentbox(['scout', task]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').filter((l) => /^\[[^\]]+\] Bash /.test(l));
    expect(lines).toEqual([
      expect.stringMatching(/\] Bash echo one$/),
      expect.stringMatching(/\] Bash echo two$/),
    ]);
    expect(result.stdout).not.toContain('\r');
  });

  it('a scout answers in the terminal; the next step after a failure depends on its kind', async () => {
    const task = 'TASK-ANSWER what is here?';
    p.server.setRules([{ when: { anyText: task }, reply: text('THE-ANSWER: a README and a package.json') }]);
    const result = await p.agentbox(['scout', task]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('\nTHE-ANSWER: a README and a package.json\n');
    const json = JSON.parse((await p.agentbox(['scout', task, '--json'])).stdout);
    expect(json.answer).toBe('THE-ANSWER: a README and a package.json');
    const shown = await p.agentbox(['show', json.run]);
    expect(shown.stdout).toMatch(/\nreport\n {2}# scout: TASK-ANSWER[^\n]*\n[\s\S]*THE-ANSWER: a README/);
    expect(shown.stdout).not.toMatch(/^ {2}pid /m);
    expect(JSON.parse((await p.agentbox(['show', json.run, '--json'])).stdout).report).toContain(
      'THE-ANSWER',
    );

    // The model API refuses: the next step is the login, not a bare resume.
    const failing = 'TASK-API-ERROR';
    p.server.setRules([{ when: { anyText: failing }, reply: { httpStatus: 401 } }]);
    const failed = await p.agentbox(['scout', failing]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/next +check that Claude Code can reach the model \(agentbox doctor/);
  });

  it('a typo gets its suggestion in a few lines; --help groups the commands and shows examples', async () => {
    const typo = await p.agentbox(['stauts']);
    expect(typo.code).toBe(2);
    const lines = typo.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(typo.stderr).toContain('(Did you mean status?)');
    const help = await p.agentbox(['--help']);
    for (const heading of ['Set up:', 'Runs:', 'The human gate:', 'Run control:', 'The ledger:', 'Examples:'])
      expect(help.stdout).toContain(`\n${heading}\n`);
    expect(help.stdout).toContain('$ agentbox fix "cache the session lookup"');
  });

  it('a detached run can be followed with watch and stopped with stop: ABORTED, its patch and report kept', async () => {
    const task = 'TASK-DETACHED long work';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: (r: RequestView) =>
          tool('Write', { file_path: path.join(r.workingDirectory!, 'half.txt'), content: 'half done\n' }),
      },
      { when: { anyText: task, turn: 1 }, reply: bash("python3 -c 'import time; time.sleep(60)'") },
      { when: { anyText: task }, reply: text('done') },
    ]);
    const started = await p.agentbox(['fix', task, '--detach', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const name = JSON.parse(started.stdout).run as string;
    const id = name.slice(-6);
    const watching = p.agentbox(['watch', id], { timeoutMs: 120_000 });
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)),
      'the second turn',
    );
    await sleep(1500);
    const stopped = await p.agentbox(['stop', id]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain(`${name} — ABORTED (killed): stopped by agentbox stop`);
    const watched = await watching;
    expect(watched.code).toBe(1);
    expect(watched.stdout).toMatch(/\] Write \S*half\.txt\n/);
    expect(watched.stdout).toContain("] Bash python3 -c 'import time; time.sleep(60)'\n");
    expect(watched.stdout).toContain('stop requested (agentbox stop)');
    expect(watched.stdout.trimEnd().split('\n').slice(-2)).toEqual([
      // (the command the stop killed is said as the foreground says it: exit code 137)
      `✗ ${name} — ABORTED (killed): stopped by agentbox stop · 1 tool call failed (last: Bash python3 -c 'import time; time.sleep(60)': Exit code 137) · exit 1`,
      `  next agentbox resume ${id}`,
    ]);
    expect(p.read(name, 'changes.patch')).toContain('+half done');
    expect(p.read(name, 'report.md')).toContain('ABORTED');
    // The worker's log was written as the run went, a line per tool call.
    expect(p.read(name, 'raw/agentbox.log')).toContain("] Bash python3 -c 'import time; time.sleep(60)'");
    // A finished run: watch prints what happened and the outcome at once; stop says it is not running.
    const again = await p.agentbox(['watch', id]);
    expect(again.stdout).toContain("Bash python3 -c 'import time; time.sleep(60)'");
    // Events replay at their own times, not at the time of watching.
    const requested = again.stdout.split('\n').find((line) => line.includes('stop requested'));
    expect(watched.stdout.split('\n')).toContain(requested);
    expect(again.code).toBe(1);
    const notRunning = await p.agentbox(['stop', id]);
    expect(notRunning.code).toBe(2);
    expect(notRunning.stderr).toContain(`run ${name} is not running (ABORTED)`);
  }, 120_000);

  it('stop right after --detach waits for the worker to start, then ends it cleanly', async () => {
    const task = 'TASK-DETACHED stopped at once';
    // The model never answers: only the stop can end this run.
    p.server.setRules([{ when: { anyText: task }, reply: hang() }]);
    const started = await p.agentbox(['fix', task, '--detach', '--json']);
    const name = JSON.parse(started.stdout).run as string;
    const stopped = await p.agentbox(['stop', name.slice(-6)]);
    expect(stopped.code, `${stopped.stdout}${stopped.stderr}`).toBe(0);
    expect(stopped.stdout).not.toContain('its process is gone');
    expect(stopped.stdout).toContain(`${name} — ABORTED (killed): stopped by agentbox stop`);
    expect(p.state(name)).toMatchObject({ status: 'ABORTED', failure: { kind: 'killed' } });
    expect(p.read(name, 'report.md')).toContain('ABORTED');
  }, 120_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
