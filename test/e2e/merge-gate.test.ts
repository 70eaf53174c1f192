import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { sleep, startPty, waitFor } from '../helpers/pty.js';
import { request, startUi } from '../helpers/ui.js';

/**
 * Issue 27 item 8: the merge gate tells the truth. Three real fix runs that did not pass — ABORTED
 * because runs.verify failed, stopped (ABORTED, killed), CRASHED (agentbox killed after writing its
 * patch) — each keep a patch that applies. `merge --yes` refuses each (status, why, --force) and
 * logs it; the prompt, `show` and the web UI's API say the status first; `--yes --force` and the
 * UI's confirmed merge apply it.
 */
describe('the merge gate', () => {
  let p: Project;
  const runs: Record<string, { name: string; id: string }> = {};
  const writes = (task: string, file: string, then: ReturnType<typeof text>) => [
    {
      when: { anyText: task, turn: 0 },
      reply: (r: RequestView) =>
        tool('Write', { file_path: path.join(r.workingDirectory!, file), content: `${file} changed\n` }),
    },
    { when: { anyText: task }, reply: then },
  ];
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);
  const of = (name: string) => ({ name, id: name.slice(-6) });
  const content = (file: string) => fs.readFileSync(path.join(p.repo.dir, file), 'utf8');

  beforeAll(async () => {
    p = await project({
      files: {
        'a.txt': 'a\n',
        'b.txt': 'b\n',
        'c.txt': 'c\n',
        'check.sh': 'echo "CHECKS-FAIL: a.txt is wrong"; exit 1\n',
      },
    });
    // 1. runs.verify fails at every Stop: the run ends ABORTED (verify_failed), patch kept.
    config('runs:\n  verify: sh check.sh\n');
    const verifyTask = 'TASK-GATE-VERIFY change a';
    p.server.setRules(writes(verifyTask, 'a.txt', text('Done, all checks pass.')));
    expect((await p.agentbox(['fix', verifyTask])).code).toBe(1);
    runs.verify = of(p.newest());
    config('');

    // 2. Stopped by the person mid-command: ABORTED (killed), patch kept.
    const stopTask = 'TASK-GATE-STOP change b';
    p.server.setRules([
      ...writes(stopTask, 'b.txt', text('done')).slice(0, 1),
      { when: { anyText: stopTask, turn: 1 }, reply: bash("python3 -c 'import time; time.sleep(60)'") },
      { when: { anyText: stopTask }, reply: text('done') },
    ]);
    const started = await p.agentbox(['fix', stopTask, '--detach', '--json']);
    runs.stopped = of(JSON.parse(started.stdout).run);
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(stopTask)),
      'the second turn',
    );
    await sleep(1000);
    expect((await p.agentbox(['stop', runs.stopped.id])).code).toBe(0);

    // 3. agentbox killed right after it wrote the patch: the watchdog marks the run CRASHED.
    const crashTask = 'TASK-GATE-CRASH change c';
    p.server.setRules(writes(crashTask, 'c.txt', text('done')));
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'fix', crashTask], {
      cwd: p.repo.dir,
      env: { ...p.env, AGENTBOX_TEST_PAUSE: 'finalize:patch' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const crashed = await waitFor(
      () => p.runs().find((n) => fs.existsSync(path.join(p.runDir(n), 'paused-patch'))),
      'agentbox to pause after writing the patch',
      { timeoutMs: 90_000 },
    );
    child.kill('SIGKILL');
    await exited;
    fs.rmSync(path.join(p.runDir(crashed), 'paused-patch'));
    await p.agentbox(['status']);
    runs.crashed = of(crashed);
  }, 300_000);
  afterAll(async () => p?.cleanup());

  it('the three runs ended as the scenario says, each with a patch', () => {
    expect(p.state(runs.verify!.name)).toMatchObject({ status: 'ABORTED', output: { verified: false } });
    expect(p.state(runs.stopped!.name)).toMatchObject({ status: 'ABORTED', failure: { kind: 'killed' } });
    expect(p.state(runs.crashed!.name).status).toBe('CRASHED');
    for (const r of Object.values(runs)) expect(p.read(r.name, 'changes.patch')).toContain('changed');
  });

  it.each([
    ['verify', 'ABORTED', /runs\.verify FAILED/],
    ['stopped', 'ABORTED', /killed: stopped by agentbox stop/],
    ['crashed', 'CRASHED', /crashed|supervisor/],
  ])(
    'merge --yes refuses the %s run: its status, why, and --force; logged; nothing changed',
    async (key, status, why) => {
      const run = runs[key]!;
      const result = await p.agentbox(['merge', run.id, '--yes']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(
        `refusing to merge ${run.name} with --yes: it did not pass: it ended ${status}`,
      );
      expect(result.stderr).toMatch(why);
      expect(result.stderr).toContain(`agentbox merge ${run.id} --yes --force`);
      expect(p.state(run.name).status).toBe(status);
      expect(p.events(run.name).filter((e) => e.event === 'merge_refused')).toEqual([
        expect.objectContaining({ reason: 'not_passing', detail: expect.stringContaining(status) }),
      ]);
      // show says it first, right under the run's name.
      const shown = (await p.agentbox(['show', run.id])).stdout.split('\n');
      expect(shown[1]).toMatch(new RegExp(`^ {2}✗ did not pass: it ended ${status}`));
      expect(JSON.parse((await p.agentbox(['show', run.id, '--json'])).stdout).not_passing.status).toBe(
        status,
      );
    },
  );

  it('the prompt says the status first, before the diffstat; --yes --force merges', async () => {
    const { id, name } = runs.verify!;
    const s = startPty(['merge', id], { cwd: p.repo.dir, env: p.env, cols: 200 });
    await waitFor(() => s.output().includes('[y/N'), 'the prompt', { context: () => s.output() });
    s.write('n\r');
    expect(await s.exited).toBe(1);
    const lines = s
      .output()
      .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '');
    expect(lines[0]).toMatch(/^✗ this run did not pass: it ended ABORTED — .*runs\.verify FAILED/);
    expect(lines.join('\n')).toContain('Apply these changes of a run that did not pass (ABORTED)');
    expect(content('a.txt')).toBe('a\n');

    const forced = await p.agentbox(['merge', id, '--yes', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(content('a.txt')).toBe('a.txt changed\n');
    expect(p.state(name).status).toBe('MERGED');
    // The ledger's record of the merge says it was forced past the gate.
    const index = fs.readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8').trim().split('\n');
    const merged = index.map((l) => JSON.parse(l)).find((e) => e.run === name && e.event === 'merged');
    expect(merged.detail).toContain('merged though it did not pass: it ended ABORTED');
    const stopped = await p.agentbox(['merge', runs.stopped!.id, '--yes', '--force']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(content('b.txt')).toBe('b.txt changed\n');
  });

  it("the web UI's run page says it, and its merge needs an explicit confirmation (force)", async () => {
    const ui = await startUi(p.repo.dir, p.env);
    try {
      const api = (pathname: string, body?: unknown) =>
        request(ui.port, pathname, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${ui.token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const { id, name } = runs.crashed!;
      expect((await api(`/api/runs/${id}`)).json().not_passing).toMatchObject({ status: 'CRASHED' });
      const refused = await api(`/api/runs/${id}/merge`, { commit: false });
      expect(refused.status).toBe(409);
      expect(refused.json()).toMatchObject({ code: 'MERGE_REFUSED', not_passing: { status: 'CRASHED' } });
      expect(content('c.txt')).toBe('c\n');
      const merged = await api(`/api/runs/${id}/merge`, { commit: false, force: true });
      expect(merged.status, merged.text).toBe(200);
      expect(content('c.txt')).toBe('c.txt changed\n');
      expect(p.state(name).status).toBe('MERGED');
      // A merged run waits for no gate: no banner.
      expect((await api(`/api/runs/${id}`)).json().not_passing).toBeNull();
    } finally {
      await ui.stop();
    }
    await expectNoProcessesLeft(p.tag, 10_000);
  }, 60_000);
});
