import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, type Rule, text } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

const SUPERVISOR = 'You supervise a Claude Code agent';
const isSupervisor = (req: RequestView) => req.allText.includes(SUPERVISOR);
const iteration = (req: RequestView) => Number(/Iteration (\d+)\//.exec(req.allText)?.[1] ?? 0);
const decisions = (p: Project, name: string) => p.events(name).filter((e) => e.event === 'Stop');

/** Rules for one test: the worker's turns (keyed by its task) and the supervisor's answers. */
function script(
  task: string,
  worker: Rule['reply'][],
  supervisor: (req: RequestView) => ReturnType<typeof text>,
): Rule[] {
  return [
    {
      name: 'supervisor',
      when: { predicate: (req) => isSupervisor(req) && req.allText.includes(task) },
      reply: supervisor,
    },
    ...worker.map((reply, turn) => ({
      name: `worker turn ${turn}`,
      when: { turn, predicate: (req: RequestView) => !isSupervisor(req) && req.allText.includes(task) },
      reply,
    })),
  ];
}

describe('the supervisor on the real Claude Code', () => {
  let p: Project;
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  it('[CONTINUE] <text> reaches the worker as its next user turn; then [COMPLETE] ends the run DONE', async () => {
    const task = 'write the parser';
    p.server.setRules(
      script(task, [text('I am done early.'), text('Added the test as well.')], (req) =>
        iteration(req) === 1
          ? text('```\n[CONTINUE] also add a test\n```')
          : text('Looks good.\n[COMPLETE] parser and test written'),
      ),
    );
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('DONE');

    const requests = p.server.requests.slice(first);
    const worker = requests.filter((r) => !isSupervisor(r.view));
    // The supervisor's exact text arrived as the worker's next user message (Claude Code's Stop feedback).
    expect(worker[1]!.view.turn).toBe(1);
    expect(worker[1]!.view.lastUserText).toContain('also add a test');
    const sup = requests.filter((r) => isSupervisor(r.view));
    expect(sup).toHaveLength(2);
    // The supervisor was offered no tools and got the task verbatim, the iteration and the last message.
    expect(sup[0]!.view.tools).toEqual([]);
    expect(sup[0]!.view.allText).toContain(`<task>\n${task}\n</task>`);
    expect(sup[0]!.view.allText).toContain('Iteration 1/50');
    expect(sup[0]!.view.allText).toContain('I am done early.');
    expect(sup[1]!.view.allText).toContain('Iteration 2/50');

    const [d1, d2] = decisions(p, name);
    expect(d1).toMatchObject({
      decision: 'continue',
      source: 'claude',
      text: 'also add a test',
      iteration: 1,
    });
    expect(d1.prompt).toContain(SUPERVISOR);
    expect(d1.raw).toContain('[CONTINUE] also add a test');
    expect(d2).toMatchObject({
      decision: 'complete',
      source: 'claude',
      reason: 'parser and test written',
      iteration: 2,
    });
  });

  it('[ABORT] <reason> ends the run ABORTED with the reason', async () => {
    const task = 'delete the tests';
    p.server.setRules(
      script(task, [text('Deleted them.')], () => text('[ABORT] the agent deleted the test suite')),
    );
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(result.code).toBe(1);
    const state = p.state(p.newest());
    expect(state).toMatchObject({
      status: 'ABORTED',
      failure: { kind: 'agent_abort', message: 'the agent deleted the test suite' },
    });
  });

  it('a budget of 3 stops the run at its third stop', async () => {
    const task = 'endless work';
    p.server.setRules(
      script(task, [text('one'), text('two'), text('three'), text('four')], () =>
        text('[CONTINUE] keep going'),
      ),
    );
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude', '--max-iterations', '3']);
    expect(result.code).toBe(1);
    const name = p.newest();
    expect(p.state(name)).toMatchObject({ status: 'ABORTED', failure: { kind: 'budget' } });
    expect(p.state(name).failure.message).toContain('iteration budget reached (3/3)');
    const requests = p.server.requests.slice(first);
    // Three stops: two continued, and at the third the supervisor's CONTINUE became the hard stop.
    expect(requests.filter((r) => !isSupervisor(r.view))).toHaveLength(3);
    expect(requests.filter((r) => isSupervisor(r.view)).map((r) => iteration(r.view))).toEqual([1, 2, 3]);
    expect(decisions(p, name).map((d) => d.decision)).toEqual(['continue', 'continue', 'abort']);
    expect(decisions(p, name).at(-1)).toMatchObject({ source: 'claude', warning: true });
  });

  it('answers without a marker are logged and counted, and repeated ones end the run', async () => {
    const task = 'vague work';
    p.server.setRules(
      script(task, [text('did something')], () => text('I think it is probably fine, mostly.')),
    );
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(result.code).toBe(1);
    const name = p.newest();
    expect(p.state(name)).toMatchObject({ status: 'ABORTED', failure: { kind: 'supervisor' } });
    const ds = decisions(p, name);
    expect(ds.map((d) => d.decision)).toEqual(['none', 'none', 'none', 'abort']);
    expect(ds[0].raw).toContain('probably fine');
  });

  it('a supervisor that hangs past its timeout falls back to the rules, recorded', async () => {
    config('supervisor:\n  timeout: 2s\n');
    const task = 'slow supervisor';
    p.server.setRules(
      script(task, [text('finished')], () => ({ text: '[COMPLETE] too late', delayMs: 120_000 })),
    );
    const started = Date.now();
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(result.code).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('DONE');
    expect(decisions(p, name)).toEqual([
      expect.objectContaining({ decision: 'complete', source: 'fallback', error: 'timed out after 2000 ms' }),
    ]);
    fs.rmSync(path.join(p.repo.dir, 'agentbox.yaml'));
  });

  it('a supervisor call that fails falls back to the rules, recorded', async () => {
    const task = 'failing supervisor';
    p.server.setRules(script(task, [text('finished')], () => ({ httpStatus: 500 })));
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(result.code).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('DONE');
    const [d] = decisions(p, name);
    expect(d).toMatchObject({ decision: 'complete', source: 'fallback' });
    expect(d.error).toMatch(/exit code 1/);
  });

  it('injected messages arrive once, in order, even when two are queued', async () => {
    const task = 'long job';
    p.server.setRules(
      script(task, [bash('sleep 3; echo slept'), text('first part done'), text('all done')], () =>
        text('[COMPLETE] ok'),
      ),
    );
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'scout', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    while (!p.server.requests.some((r) => r.view.allText.includes(task)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const name = p.newest();
    const a = await p.agentbox(['inject', name, 'FIRST: also check the README']);
    const b = await p.agentbox(['inject', 'latest', 'SECOND: then update the changelog']);
    expect(a.code).toBe(0);
    expect(b.stdout).toContain('delivered at its next stop (2 waiting)');
    expect(await exited).toBe(0);

    const worker = p.server.requests.filter((r) => r.view.allText.includes(task) && !isSupervisor(r.view));
    const delivered = worker.filter((r) => r.view.lastUserText.includes('FIRST'));
    expect(delivered).toHaveLength(1);
    const message = delivered[0]!.view.lastUserText;
    expect(message.indexOf('FIRST: also check the README')).toBeLessThan(
      message.indexOf('SECOND: then update the changelog'),
    );
    expect(message).toContain('FIRST: also check the README\n\nSECOND: then update the changelog');
    const injected = decisions(p, name).filter((d) => d.decision === 'inject');
    expect(injected).toHaveLength(1);
    expect(injected[0].messages).toHaveLength(2);
    expect(fs.readdirSync(path.join(p.runDir(name), 'inbox/pending'))).toEqual([]);
    expect(p.state(name).status).toBe('DONE');

    const late = await p.agentbox(['inject', name, 'too late']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain('is not running');
  });

  it('the endpoint refuses a wrong secret, a huge body and bad JSON, and keeps serving the run', async () => {
    const task = 'endpoint abuse';
    p.server.setRules(
      script(task, [bash('sleep 2; echo survived'), text('still fine')], () => text('[COMPLETE] ok')),
    );
    const child = spawn(process.execPath, [AGENTBOX_BIN, 'scout', task], {
      cwd: p.repo.dir,
      env: p.env,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    let url: string | undefined;
    while (!url && Date.now() < deadline) {
      const name = p.runs().find((n) => n.includes('endpoint-abuse'));
      url = name ? p.state(name).endpoint_url : undefined;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const name = p.newest();
    // The secret is only in the run's private settings file (never in claude's environment); read
    // it there, as the agent could not.
    const pid = p.state(name).claude_pid;
    expect(fs.readFileSync(`/proc/${pid}/environ`, 'latin1')).not.toContain('AGENTBOX_TOKEN');
    const settingsFile = fs
      .readFileSync(`/proc/${pid}/cmdline`, 'latin1')
      .split('\0')
      .find((a) => a.startsWith('--settings='))!
      .slice('--settings='.length);
    expect(fs.statSync(settingsFile).mode & 0o077).toBe(0);
    const token = /Bearer ([0-9a-f]+)/.exec(fs.readFileSync(settingsFile, 'utf8'))![1];
    const post = (body: string | Uint8Array, auth?: string) =>
      fetch(`${url}/hook/PostToolUse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body,
      }).then((r) => r.status);
    expect(await post('{}')).toBe(401);
    expect(await post('{}', `Bearer ${'0'.repeat(64)}`)).toBe(401);
    expect(await post(new Uint8Array(9 * 1024 * 1024), `Bearer ${token}`)).toBe(413);
    expect(await post('{not json', `Bearer ${token}`)).toBe(400);
    expect(await exited).toBe(0);
    expect(p.state(name).status).toBe('DONE');
    const problems = p.events(name).filter((e) => e.event === 'endpoint_problem');
    expect(problems.map((e) => e.status)).toEqual([401, 401, 413, 400]);
    expect(p.read(name, 'report.md')).toContain('still fine');
  });

  it('records SessionStart from the stream (a headless run has no SessionStart hook to wait for)', async () => {
    const name = p.newest();
    expect(p.events(name).find((e) => e.event === 'SessionStart')).toMatchObject({
      source: 'startup',
      via: 'stream',
    });
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
