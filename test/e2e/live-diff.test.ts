import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text, tool } from '../fixtures/model-server/index.js';
import { axeLightAndDark } from '../helpers/axe.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty, waitFor } from '../helpers/pty.js';
import { launchChromium, request, startUi, type Ui } from '../helpers/ui.js';

/*
 * Issue 30, the live diff: a fix run on the real Claude Code edits a file, writes a new one, then
 * waits (a Bash loop until the test releases it). Meanwhile `agentbox diff`, the API and the page
 * show both changes marked in progress; once it ends, the diff is changes.patch, unmarked.
 */
describe('the live diff of an ACTIVE fix run', () => {
  let p: Project;
  let ui: Ui;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    ui = await startUi(p.repo.dir, p.env);
  });
  afterAll(async () => {
    await ui?.stop();
    await p?.cleanup();
  });

  it('agentbox diff, the API and the page show the changes so far in progress, then the final patch', async () => {
    // The agent waits for a file in its worktree (its box reads nothing of the machine's /tmp),
    // and removes it as it goes on: it is in no patch.
    const release = '.agentbox-release';
    const task = 'TASK-LIVE-DIFF change x and add notes';
    const at = (file: string) => (req: { workingDirectory?: string | undefined }) =>
      path.join(req.workingDirectory!, file);
    p.server.setRules(
      [
        (req: { workingDirectory?: string | undefined }) =>
          tool('Edit', {
            file_path: at('src/app.ts')(req),
            old_string: 'export const x = 1;',
            new_string: 'export const x = 42;',
          }),
        (req: { workingDirectory?: string | undefined }) =>
          tool('Write', { file_path: at('NOTES.md')(req), content: '# Notes\nx is 42\n' }),
        () => bash(`until [ -e ${release} ]; do sleep 0.2; done; rm ${release}; echo released`),
        () => text('x is 42 and NOTES.md says so.'),
      ].map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
    );
    const started = await p.agentbox(['fix', task, '--detach', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const name = JSON.parse(started.stdout).run as string;
    const id = name.slice(-6);
    // The agent is in its Bash loop once the stream holds its command.
    const stream = path.join(p.runDir(name), 'raw', 'stream.jsonl');
    await waitFor(
      () => fs.existsSync(stream) && fs.readFileSync(stream, 'utf8').includes('until [ -e'),
      'the waiting Bash call',
      {
        timeoutMs: 90_000,
      },
    );
    expect(p.state(name).status).toBe('ACTIVE');

    const piped = await p.agentbox(['diff', id]);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain('+export const x = 42;');
    expect(piped.stdout).toMatch(/diff --git a\/NOTES.md b\/NOTES.md\nnew file mode 100644/);
    expect(piped.stderr, piped.stdout.match(/^diff --git .*$/gm)?.join('\n')).toMatch(
      /^in progress: .* is ACTIVE — its worktree's changes so far against [0-9a-f]{12} \(2 files\)/,
    );
    const stat = await p.agentbox(['diff', id, '--stat']);
    expect(stat.stdout).toMatch(/NOTES.md +\| 2 \+\+\n src\/app.ts \| 2 \+-\n.*\nin progress: /);
    const json = JSON.parse((await p.agentbox(['diff', id, '--json'])).stdout);
    expect(json).toMatchObject({ in_progress: true, files: [{ path: 'NOTES.md' }, { path: 'src/app.ts' }] });
    // On a terminal, through the pager (cat here), with its header line.
    const tty = startPty(['diff', id, '--color=never'], {
      cwd: p.repo.dir,
      env: { ...p.env, GIT_PAGER: 'cat' },
    });
    expect(await tty.exited).toBe(0);
    expect(tty.output()).toMatch(/^in progress: [^\n]*\r?\n[\s\S]*\+export const x = 42;/);

    const api = (pathname: string) =>
      request(ui.port, pathname, { headers: { authorization: `Bearer ${ui.token}` } });
    const live = (await api(`/api/runs/${id}/diff`)).json();
    expect(live).toMatchObject({ in_progress: true, too_large: false });
    expect(live.patch).toBe(json.patch);

    // The page: "Changes so far", marked in progress, with the new file in diff2html's list.
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(ui.loginUrl);
      await page.goto(`${ui.url}/#/run/${id}`);
      await page.locator('#in-progress').waitFor();
      expect(await page.locator('#live-diff h2').textContent()).toBe('Changes so far in progress');
      await page.locator('#live-diff .d2h-file-wrapper', { hasText: 'NOTES.md' }).first().waitFor();
      // axe-core on the section, light and dark: nothing serious or critical.
      expect(await axeLightAndDark(page, '#live-diff')).toEqual([]);
    } finally {
      await browser.close();
    }

    fs.writeFileSync(path.join(p.state(name).worktree_path!, release), '');
    await waitFor(() => p.state(name).status === 'REVIEW', 'REVIEW', { timeoutMs: 90_000 });
    const finalPatch = p.read(name, 'changes.patch');
    const after = JSON.parse((await p.agentbox(['diff', id, '--json'])).stdout);
    expect(after).toMatchObject({ in_progress: false, patch: finalPatch });
    expect(finalPatch).toBe(json.patch);
    const done = await p.agentbox(['diff', id]);
    expect(done.stderr).toBe('');
    expect(done.stdout).toContain('+export const x = 42;');
    expect((await api(`/api/runs/${id}/diff`)).json()).toMatchObject({
      in_progress: false,
      patch: finalPatch,
    });
    await ui.stop();
    await expectNoProcessesLeft(p.tag);
  }, 240_000);
});
