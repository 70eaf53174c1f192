import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty, waitFor } from '../helpers/pty.js';

/**
 * A CI job can hand agentbox a pseudo-terminal (`docker run -t`, some runners): with CI set it
 * still behaves as in a log. The same commands on the same kind of terminal without CI are the
 * control: they do draw and ask, so each assertion below can fail.
 */
let p: Project;
let review: string;

beforeAll(async () => {
  p = await project();
  p.server.setRules([
    {
      when: { turn: 0, anyText: 'add ci.txt' },
      reply: (req) =>
        tool('Write', { file_path: path.join(req.workingDirectory!, 'ci.txt'), content: 'x\n' }),
    },
    { when: { turn: 1, anyText: 'add ci.txt' }, reply: text('Added.') },
    { when: { anyText: 'what is here' }, reply: text('A README.') },
  ]);
  const run = await p.agentbox(['fix', 'add ci.txt']);
  expect(run.code).toBe(0);
  review = p.newest().slice(-6);
}, 120_000);

afterAll(async () => p?.cleanup());

const onPty = async (args: string[], env: Record<string, string>) => {
  const session = startPty(args, { cwd: p.repo.dir, env: { ...p.env, ...env } });
  const timer = setTimeout(() => session.kill(), 90_000);
  try {
    return { code: await session.exited, out: session.output() };
  } finally {
    clearTimeout(timer);
  }
};

describe('CI set, on a terminal', () => {
  it('merge does not ask: it fails at once and names --yes; without CI it asks', async () => {
    const ci = await onPty(['merge', review], { CI: 'true' });
    expect(ci.code, ci.out).toBe(2);
    expect(ci.out).toContain('refusing to merge without a confirmation');
    expect(ci.out).toContain(`agentbox merge ${review} --yes`);
    expect(ci.out).not.toContain('Apply these changes');

    const session = startPty(['merge', review], { cwd: p.repo.dir, env: p.env });
    await waitFor(() => session.output().includes('Apply these changes'), 'the merge question');
    session.write('n\r');
    expect(await session.exited).toBe(1);
    expect(session.output()).toContain('Nothing changed.');
  }, 60_000);

  it('a run prints plain lines: no colour, no live line; without CI it draws', async () => {
    const ci = await onPty(['scout', 'what is here, in CI'], { CI: 'true' });
    expect(ci.code, ci.out).toBe(0);
    expect(ci.out).toContain('A README.');
    expect(ci.out).not.toContain('\x1b');
    const local = await onPty(['scout', 'what is here, locally'], {});
    expect(local.code).toBe(0);
    expect(local.out).toContain('\x1b[');
    await expectNoProcessesLeft(p.tag);
  }, 120_000);

  it('start refuses: an interactive session needs a person at the terminal', async () => {
    const ci = await onPty(['start'], { CI: 'true' });
    expect(ci.code, ci.out).toBe(2);
    expect(ci.out).toContain('agentbox start needs a terminal');
  }, 60_000);
});
