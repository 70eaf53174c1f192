import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import type { HookInput } from '../../src/endpoint/server.js';
import { EventLog } from '../../src/ledger/events.js';
import { openRunHarness, Releases } from '../../src/run/begin/harness.js';
import type { Denial } from '../../src/supervisor/hooks.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { create, ledgerRepo, scratchDir } from './fixtures/ledger.js';

describe('Releases: reverse order, every one, errors collected, once', () => {
  it('releases in reverse order of acquisition and returns what failed, after running the rest', async () => {
    const releases = new Releases();
    const order: string[] = [];
    releases.defer(() => order.push('endpoint'));
    releases.defer(() => {
      order.push('private area');
      throw new Error('EBUSY');
    });
    releases.defer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push('claude');
    });
    releases.defer(() => Promise.reject(new Error('already gone')));

    const errors = await releases.release();
    expect(order).toEqual(['claude', 'private area', 'endpoint']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['already gone', 'EBUSY']);
  });

  it('a second release does nothing', async () => {
    const releases = new Releases();
    let count = 0;
    releases.defer(() => count++);
    expect(await releases.release()).toEqual([]);
    expect(await releases.release()).toEqual([]);
    expect(count).toBe(1);
  });

  it('a release deferred while releasing runs too (nothing acquired late is leaked)', async () => {
    const releases = new Releases();
    const order: string[] = [];
    releases.defer(() => order.push('first'));
    releases.defer(() => {
      order.push('second');
      releases.defer(() => order.push('late'));
    });
    await releases.release();
    expect(order).toEqual(['second', 'late', 'first']);
  });
});

/** A scout run in a temp repository, with what the harness needs around it. */
async function scoutRun() {
  const { repo, ledger } = ledgerRepo();
  const run = await create(ledger, 'why is login slow?', '2026-11-21T14:49:00Z');
  const log = new EventLog(run.dir);
  const supervisor = new Supervisor({
    config: { mode: 'rules', maxIterations: 5, loopLimit: 3 },
    task: run.meta.task,
    runType: run.meta.type,
    runDir: run.dir,
    log,
    startedAt: Date.now(),
  });
  // The private area goes under TMPDIR: the test's own folder.
  const env = { TMPDIR: scratchDir(), HOME: scratchDir() };
  return { repo, ledger, run, log, supervisor, env };
}

const hook = (url: string, token: string, event: string, input: HookInput) =>
  fetch(`${url}/hook/${event}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ hook_event_name: event, ...input }),
  });

describe('openRunHarness: what every run needs before claude starts', () => {
  it('slash commands, an endpoint that runs the airlock, the private area; all gone after release', async () => {
    const { repo, ledger, run, log, supervisor, env } = await scoutRun();
    const denials: Denial[] = [];
    const routed: string[] = [];
    const steps: string[] = [];
    const harness = await openRunHarness({
      ledger,
      meta: run.meta,
      launchDir: repo.dir,
      worktree: null,
      env,
      sandbox: DEFAULT_CONFIG.sandbox,
      log,
      supervisor,
      route: (hooks) => (event, input) => {
        routed.push(event);
        return hooks(event, input);
      },
      onDenial: (d) => denials.push(d),
      onStep: (step) => steps.push(step),
    });
    const commands = path.join(repo.dir, '.claude', 'commands', `run_${run.id}`);
    expect(fs.readdirSync(commands).length).toBeGreaterThan(0);
    expect(harness.scope).toMatchObject({ type: 'scout', worktree: null, runDir: fs.realpathSync(run.dir) });
    expect(steps).toEqual([
      'slash commands',
      // The private area first: the guard behind the endpoint holds the tools to its read fence.
      'private area + private git + sandbox paths',
      'supervisor + endpoint',
    ]);

    harness.writeSecrets({ hooks: {} });
    const settingsFile = harness.privacy.secrets.settingsFile;
    expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8'))).toEqual({ hooks: {} });
    expect(JSON.parse(fs.readFileSync(harness.privacy.secrets.hookFile, 'utf8'))).toMatchObject({
      url: harness.endpoint.url,
    });

    // A read of the ledger is refused by the airlock, through the route, and reported.
    const { url, token } = harness.endpoint;
    const answer = await hook(url, token, 'PreToolUse', {
      tool_name: 'Read',
      tool_input: { file_path: path.join(ledger.dir, 'INDEX.md') },
      tool_use_id: 'toolu_1',
      cwd: repo.dir,
    });
    expect(answer.status).toBe(200);
    expect(JSON.stringify(await answer.json())).toContain('deny');
    expect(routed).toEqual(['PreToolUse']);
    expect(denials).toMatchObject([{ toolUseId: 'toolu_1', tool: 'Read' }]);

    expect(await harness.release()).toEqual([]);
    expect(fs.existsSync(path.join(repo.dir, '.claude'))).toBe(false);
    expect(fs.existsSync(settingsFile)).toBe(false);
    await expect(hook(url, token, 'Stop', {})).rejects.toThrow();
    expect(await harness.release()).toEqual([]);
  });

  it('keeps a .claude folder the repository had, and what else is in it', async () => {
    const { repo, ledger, run, log, supervisor, env } = await scoutRun();
    repo.write('.claude/settings.json', '{}\n');
    const harness = await openRunHarness({
      ledger,
      meta: run.meta,
      launchDir: repo.dir,
      worktree: null,
      env,
      sandbox: DEFAULT_CONFIG.sandbox,
      log,
      supervisor,
    });
    await harness.release();
    expect(fs.readdirSync(path.join(repo.dir, '.claude'))).toEqual(['settings.json']);
  });

  it('a step that fails releases what was set up before it, then throws', async () => {
    const { repo, ledger, run, log, supervisor, env } = await scoutRun();
    // Not a git worktree: the sandbox's private git cannot be made for it.
    const notAWorktree = scratchDir();
    const error = await openRunHarness({
      ledger,
      meta: run.meta,
      launchDir: notAWorktree,
      worktree: notAWorktree,
      env,
      sandbox: DEFAULT_CONFIG.sandbox,
      log,
      supervisor,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // The commands (and the folders made for them) are gone again; the repository was not touched.
    expect(fs.readdirSync(notAWorktree)).toEqual(['.agentbox-run']);
    expect(fs.existsSync(path.join(repo.dir, '.claude'))).toBe(false);
    expect(fs.readdirSync(path.join(env.TMPDIR, `agentbox-${process.getuid?.() ?? 0}`, 'secrets'))).toEqual(
      [],
    );
  });
});
