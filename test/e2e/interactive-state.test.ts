import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { text } from '../fixtures/model-server/index.js';
import { prepareInteractiveConfig, TEST_API_KEY } from '../helpers/claude.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { type PtySession, sleep, startPty, waitFor } from '../helpers/pty.js';

/**
 * Issue 14 item 11: interactive state stays true when the hooks say nothing. Esc in the middle of
 * a turn fires no hook (measured: Claude Code cancels the turn, puts the prompt back and sets its
 * title to `✳ Claude Code`); agentbox sees the key and then the screen, calls the session idle,
 * and a queued message goes in.
 */
describe('interactive state: Esc mid-turn', () => {
  let p: Project;
  let session: PtySession | undefined;
  beforeAll(async () => {
    p = await project();
    prepareInteractiveConfig({
      configDir: p.home.configDir,
      projectDirs: [p.repo.dir],
      apiKey: TEST_API_KEY,
    });
  });
  afterEach(() => {
    session?.kill();
    session = undefined;
  });
  afterAll(async () => p?.cleanup());

  const stateOf = async (name: string) => {
    const r = await p.agentbox(['state', name, '--json']);
    return r.code === 0 ? JSON.parse(r.stdout) : {};
  };
  const logged = (name: string, event: string) =>
    fs
      .readFileSync(path.join(p.runDir(name), 'supervisor.log'), 'utf8')
      .split('\n')
      .filter((line) => line.split(' ')[2] === event);

  it('Esc during a slow turn: state turns idle, and a message queued with inject is typed in and answered', async () => {
    p.server.setRules([
      { when: { lastUserText: 'a slow question' }, reply: { ...text('NEVER-SHOWN'), delayMs: 20_000 } },
      { when: { lastUserText: 'queued while busy' }, reply: text('ANSWER-TO-QUEUED') },
    ]);
    const before = p.runs().length;
    session = startPty(['start'], { cwd: p.repo.dir, env: p.env });
    const s = session;
    await waitFor(() => p.runs().length > before, 'the session run');
    const name = p.newest();
    const context = () => s.output().slice(-1500);
    await waitFor(async () => (await stateOf(name)).idle === true, 'idle at start', { context });
    await s.type('a slow question');
    await waitFor(
      () => p.server.requests.some((r) => r.view.lastUserText.includes('a slow question')),
      'the slow request',
    );
    expect((await stateOf(name)).idle).toBe(false);
    // Queued while busy: it waits.
    expect((await p.agentbox(['inject', name, 'queued while busy'])).code).toBe(0);
    await sleep(500);
    expect(p.server.requests.some((r) => r.view.lastUserText.includes('queued while busy'))).toBe(false);
    s.write('\u001b');
    // No hook fires; the session sees the key, then claude's prompt, and types the queued message.
    // Exactly the message: not glued to the cancelled prompt claude put back in its input box.
    await waitFor(
      () =>
        p.server.requests.some((r) => {
          // Claude Code puts its system reminders before the person's words, in the same message.
          const words = r.view.lastUserText.split('</system-reminder>').at(-1)!.trim();
          return words === 'queued while busy';
        }),
      'the queued message to reach the model',
      { timeoutMs: 15_000, context },
    );
    await waitFor(() => s.output().includes('ANSWER-TO-QUEUED'), 'its answer on screen', { context });
    expect(logged(name, 'interrupt_key')).toHaveLength(1);
    expect(logged(name, 'idle_from_screen')).toEqual([expect.stringContaining('after=esc')]);
    expect(p.events(name).filter((e) => e.event === 'Stop')).toHaveLength(1); // the queued turn's own
    await waitFor(async () => (await stateOf(name)).idle === true, 'idle after the answer');
    expect((await p.agentbox(['stop', name])).code).toBe(0);
    await s.exited;
    await expectNoProcessesLeft(p.tag);
  }, 90_000);
});
