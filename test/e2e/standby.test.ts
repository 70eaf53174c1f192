import { type ChildProcess, execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateBase } from '../../src/sandbox/private.js';
import { bash, type RequestView, text } from '../fixtures/model-server/index.js';
import { CLAUDE_BIN } from '../helpers/claude.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { serveReady } from '../helpers/serve.js';

/**
 * A standby (src/run/standby/, docs/resident.md): a resident agentbox that brings a fix run to
 * REVIEW starts the claude of its next revision, which waits for its turn; the revision served by
 * it takes that claude — only while it is exactly what the revision would start. Real Claude Code,
 * its sandbox, the scripted model.
 */
describe('a standby: the next revision’s claude, started while the person reviews', () => {
  let p: Project;
  let server: ChildProcess;
  let name = '';
  let id = '';
  const TASK = 'TASK-STANDBY add a line';
  const waitFor = async (what: () => boolean, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(what()).toBe(true);
  };
  /** The standby events of the run: what became of each claude kept ready. */
  const standby = (run = name) =>
    p
      .events(run)
      .filter((e) => e.event === 'standby')
      .map((e) => String(e.detail));
  const keptPid = (run = name) => Number(/^claude (\d+) kept ready/.exec(standby(run).at(-1) ?? '')?.[1]);
  /** Running (a zombie left to an init that does not reap is not). */
  const alive = (pid: number) => {
    try {
      return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  /** The pid of the claude each revision ran with (its `resumed` event). */
  const claudeOf = () => {
    const index = fs.readFileSync(path.join(p.repo.dir, '.agents', 'INDEX.jsonl'), 'utf8');
    const lines = index.split('\n').filter((l) => l.includes('"event":"resumed"') && l.includes(name));
    return Number(/"detail":"pid (\d+)/.exec(lines.at(-1) ?? '')?.[1]);
  };
  const revisionRequest = (k: number) =>
    p.server.requests.find((r) =>
      r.view.lastUserText.includes(`<!-- agentbox: revision ${k} (agentbox revise) -->`),
    )?.view as RequestView;

  beforeAll(async () => {
    p = await project({ files: { 'notes.txt': 'first\n' } });
    p.server.setRules([
      { when: { anyText: TASK, turn: 0 }, reply: bash('echo one >> notes.txt') },
      { when: { lastUserText: 'REVISE-TWO' }, reply: bash('echo two >> notes.txt') },
      { when: {}, reply: text('Done.') },
    ]);
    server = (await serveReady(p)).child;
    const fix = await p.agentbox(['fix', TASK]);
    expect(fix.code, fix.stderr).toBe(0);
    name = p.newest();
    id = name.slice(-6);
    expect(p.state(name).status).toBe('REVIEW');
  }, 120_000);
  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    const tag = p?.tag;
    await p?.cleanup();
    if (tag) await expectNoProcessesLeft(tag);
  });

  it('a served fix leaves a standby that asks the model nothing; the served revision takes it: same session, earlier turns, the review as its turn, its own commit', async () => {
    await waitFor(() => keptPid() > 0);
    const pid = keptPid();
    expect(alive(pid)).toBe(true);
    // Waiting, it sends nothing to the model (its turn has not come).
    const asked = p.server.requests.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(p.server.requests.length).toBe(asked);

    const result = await p.agentbox(['revise', id, 'REVISE-TWO: add a second line']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`revising ${name} — revision 2\n`);
    expect(standby()).toContain(`claude ${pid} takes the revision`);
    const state = p.state(name);
    expect(claudeOf()).toBe(pid);
    expect(state.status).toBe('REVIEW');
    // The model's request: the run's session, its first turns, the review as the last user turn.
    const asked2 = revisionRequest(2);
    expect(asked2.sessionId).toBe(state.session_id);
    expect(asked2.allText).toContain(TASK);
    expect(asked2.lastUserText).toContain('REVISE-TWO: add a second line');
    // Revision 2 is a commit of its own, and its interdiff holds only its line.
    const count = execFileSync('git', ['rev-list', '--count', `HEAD..agentbox/${name}`], {
      cwd: p.repo.dir,
      encoding: 'utf8',
    });
    expect(count.trim()).toBe('2');
    const own = await p.agentbox(['diff', id, '--revision', '2', '--color', 'never']);
    expect(own.stdout).toContain('+two');
    expect(own.stdout).not.toContain('+one');
    // The standby it used is gone with the revision; the next is kept.
    await waitFor(() => !alive(pid));
    await waitFor(() => keptPid() > 0 && keptPid() !== pid);
  }, 120_000);

  it('a standby that is no longer what the revision would start is let go, and the revision starts its own claude: the session went on without it, the environment changed', async () => {
    const pid = keptPid();
    // The session goes on outside agentbox: the standby read it before this turn.
    const worktree = p.state(name).worktree_path;
    // (not execFileSync: the scripted model answers from this process)
    await promisify(execFile)(
      CLAUDE_BIN,
      ['--resume', p.state(name).session_id, '-p', 'DIRECT-TURN said outside'],
      {
        cwd: worktree,
        env: p.env,
      },
    );
    const result = await p.agentbox(['revise', id, 'REVISE-THREE: once more']);
    expect(result.code, result.stderr).toBe(0);
    expect(standby()).toContain(
      'let go: not used: the session, CLAUDE.md, settings or git status changed since it started',
    );
    expect(claudeOf()).not.toBe(pid);
    expect(alive(pid)).toBe(false);
    // The claude it started read the session as it is: the turn said outside is in its request.
    expect(revisionRequest(3).allText).toContain('DIRECT-TURN said outside');

    // Another environment (a variable of the person's shell): let go too.
    await waitFor(() => keptPid() > 0 && keptPid() !== pid);
    const next = keptPid();
    const other = await p.agentbox(['revise', id, 'REVISE-FOUR: and again'], { env: { SOME_SETTING: 'x' } });
    expect(other.code, other.stderr).toBe(0);
    expect(standby()).toContain('let go: not used: the environment, configuration or run changed');
    expect(claudeOf()).not.toBe(next);
  }, 120_000);

  it('is let go when its run leaves REVIEW (merge) and when the server stops, and ends with a server killed outright; AGENTBOX_STANDBY=0 keeps none', async () => {
    await waitFor(() => keptPid() > 0 && alive(keptPid()));
    const pid = keptPid();
    const merged = await p.agentbox(['merge', id, '--yes'], { env: { AGENTBOX_RESIDENT: '0' } });
    expect(merged.code, merged.stderr).toBe(0);
    await waitFor(() => standby().at(-1) === 'let go: its run is no longer waiting for review', 20_000);
    expect(alive(pid)).toBe(false);

    const off = await p.agentbox(['fix', `${TASK} off`], { env: { AGENTBOX_STANDBY: '0' } });
    expect(off.code, off.stderr).toBe(0);
    const offRun = p.newest();
    expect(p.state(offRun).status).toBe('REVIEW');
    const on = await p.agentbox(['fix', `${TASK} on`]);
    expect(on.code, on.stderr).toBe(0);
    const onRun = p.newest();
    await waitFor(() => keptPid(onRun) > 0);
    expect(standby(offRun)).toEqual([]);

    const kept = keptPid(onRun);
    const stop = await p.agentbox(['serve', '--stop']);
    expect(stop.code, stop.stderr).toBe(0);
    await waitFor(() => server.exitCode !== null);
    expect(alive(kept)).toBe(false);
    expect(standby(onRun).at(-1)).toBe('let go: the resident agentbox stopped');

    // A server killed outright: its standby's claude ends as its standard input closes.
    server = (await serveReady(p)).child;
    const last = await p.agentbox(['fix', `${TASK} killed`]);
    expect(last.code, last.stderr).toBe(0);
    const lastRun = p.newest();
    await waitFor(() => keptPid(lastRun) > 0);
    const orphan = keptPid(lastRun);
    server.kill('SIGKILL');
    await waitFor(() => !alive(orphan), 15_000);
    // Its settings and model key are left (no crash path finds a run in REVIEW) until a server
    // starts again, which removes what no live process holds.
    const secrets = path.join(privateBase(p.env, process.getuid?.() ?? 0), 'secrets');
    const ofRun = () => fs.readdirSync(secrets).filter((n) => n.startsWith(`${lastRun}-`));
    expect(ofRun()).toHaveLength(1);
    server = (await serveReady(p)).child;
    expect(ofRun()).toEqual([]);
  }, 120_000);
});
