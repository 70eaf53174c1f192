import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hang, type RequestView, text } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';

const isSupervisor = (req: RequestView) => req.allText.includes('You supervise a Claude Code agent');

/**
 * Issue 38 item 10: `agentbox stop` while the run's Stop hook is still at work (its runs.verify,
 * its supervisor's model call). The stop is the run's end: nothing of that Stop is logged after
 * `ended`, and `show` says the run was stopped, not that its verification failed.
 */
describe('stop while a Stop hook is at work', () => {
  let p: Project;
  beforeAll(async () => {
    // A verification that fails a few seconds in, as a test suite does: late enough to be stopped.
    p = await project({ files: { 'slow-verify.sh': 'sleep 4\nexit 1\n' } });
  });
  afterAll(async () => p?.cleanup());
  afterEach(() => config(''));

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);

  /** Starts a detached fix, waits for `busy`, stops it; returns its name and its events. */
  async function stopWhen(task: string, args: string[], busy: (name: string) => boolean) {
    const started = await p.agentbox(['fix', task, '--detach', '--json', ...args]);
    expect(started.code, started.stderr).toBe(0);
    const name = JSON.parse(started.stdout).run as string;
    await waitFor(() => busy(name), 'the Stop hook at work', {
      timeoutMs: 60_000,
      context: () => JSON.stringify(p.events(name), null, 1),
    });
    const stopped = await p.agentbox(['stop', name.slice(-6)]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain(`${name} — ABORTED (killed): stopped by agentbox stop`);
    // The run's process is gone: whatever its Stop hook was doing has had its chance to log.
    const { pid, ended_at: endedAt } = p.state(name);
    await waitFor(() => !alive(pid), 'the run process to exit', { timeoutMs: 30_000 });
    const events = p.events(name);
    expect(events.filter((e) => e.ts > endedAt)).toEqual([]);
    return { name, events };
  }

  async function expectShownStopped(name: string) {
    const shown = await p.agentbox(['show', name]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('stopped by agentbox stop');
    expect(shown.stdout).not.toMatch(/verify FAILED|verification: FAILED/);
    expect(p.state(name).output.verified).toBeNull();
  }

  it('during a slow runs.verify: the verification is stopped, never reported as failed', async () => {
    config('runs:\n  verify: sh slow-verify.sh\n');
    const task = 'TASK-STOP-IN-VERIFY';
    p.server.setRules([{ when: { anyText: task }, reply: text('Done.') }]);
    const verifyLog = (name: string) => path.join(p.runDir(name), 'raw', 'verify-1.log');
    const { name, events } = await stopWhen(task, [], (n) => fs.existsSync(verifyLog(n)));
    expect(events.filter((e) => e.event === 'verify' || e.event === 'violation')).toEqual([]);
    expect(events.filter((e) => e.event === 'Stop' && e.decision)).toEqual([]);
    await expectShownStopped(name);
    await expectNoProcessesLeft(p.tag);
  }, 120_000);

  it("during the supervisor's model call: the call is ended, no decision is logged", async () => {
    const task = 'TASK-STOP-IN-SUPERVISOR';
    let asked = false;
    p.server.setRules([
      {
        when: { predicate: isSupervisor },
        reply: () => {
          asked = true;
          return hang();
        },
      },
      { when: { anyText: task }, reply: text('Done.') },
    ]);
    const { name, events } = await stopWhen(task, ['--supervisor', 'claude'], () => asked);
    expect(events.filter((e) => e.event === 'Stop' && e.decision)).toEqual([]);
    await expectShownStopped(name);
    await expectNoProcessesLeft(p.tag);
  }, 120_000);
});
