import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';
import { axeLightAndDark } from '../helpers/axe.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { CHROMIUM, launchChromium, logIn, startUi, type Ui } from '../helpers/ui.js';

const SUPERVISOR = 'You supervise a Claude Code agent';
const isSupervisor = (req: RequestView) => req.allText.includes(SUPERVISOR);
const TASK = 'TASK-TVIEW make app.js return 2';
const NOTE = 'a note from the page: also read README';
/** What a hostile agent writes, in its own text and through a tool's output. */
const HOSTILE = '<script>window.__pwned="script"</script><img src=x onerror="window.__pwned=1">';

/**
 * Issue 30, the transcript in the web UI: a fix run against the real Claude Code where a scripted
 * model reads, edits, runs Bash (a long, hostile output), is refused a read of the ledger, gets a
 * message a person injects from the page while it is ACTIVE and a supervisor's correction. The run
 * page shows the entries as they come, each call's result one click (or key) away, the refusal
 * marked and counted, the agent's markup as text, and axe finds nothing serious, light and dark.
 */
describe('the transcript on the run page (real Claude Code, Chromium)', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await logIn(page, ui);
  }, 60_000);
  afterAll(async () => {
    for (const name of p?.runs() ?? [])
      if (p.state(name).status === 'ACTIVE') await p.agentbox(['stop', name.slice(-6)]);
    await browser?.close();
    await ui?.stop();
    await expectNoProcessesLeft(p.tag);
    await p?.cleanup();
  });

  const violations = () => axeLightAndDark(page);

  it('shows the entries live while ACTIVE, a result one click or key away, the refusal marked and counted, hostile text inert, axe clean', async () => {
    const root = fs.realpathSync(p.repo.dir);
    let supervised = 0;
    const worker: Rule['reply'][] = [
      (r) => tool('Read', { file_path: path.join(r.workingDirectory!, 'src/app.js') }),
      (r) =>
        tool('Edit', {
          file_path: path.join(r.workingDirectory!, 'src/app.js'),
          old_string: 'module.exports = 1;',
          new_string: 'module.exports = 2;',
        }),
      bash(`printf '%s\\n' '${HOSTILE}'; seq 1 3000`),
      () => tool('Read', { file_path: path.join(root, '.agents/INDEX.md') }),
      // Long enough for the page to show the calls so far and for a person to inject a message.
      { ...text(`First pass done ${HOSTILE}`), delayMs: 10_000 },
      text('Read README as asked.'),
      text('Checked: app.js returns 2.'),
    ];
    p.server.setRules([
      {
        name: 'supervisor',
        when: { predicate: (req) => isSupervisor(req) && req.allText.includes(TASK) },
        reply: () =>
          supervised++ === 0
            ? text('[CONTINUE] check the edit once more')
            : text('[COMPLETE] app.js returns 2'),
      },
      ...worker.map((reply, turn) => ({
        when: { turn, predicate: (req: RequestView) => !isSupervisor(req) && req.allText.includes(TASK) },
        reply,
      })),
      { when: { predicate: (req) => !isSupervisor(req) }, reply: text('Done.') },
    ]);
    const started = await p.agentbox(['fix', TASK, '--supervisor', 'claude', '--detach', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const name = JSON.parse(started.stdout).run as string;
    await page.goto(`${ui.url}/#/run/${name.slice(-6)}`);
    await page.locator('[data-status="ACTIVE"]').waitFor();
    const list = page.locator('#transcript-list');

    // Live, while ACTIVE: the calls appear as the run makes them, the refused one marked.
    const refused = list.locator('.t-entry.t-refused');
    await refused.first().waitFor({ timeout: 90_000 });
    expect(p.state(name).status).toBe('ACTIVE');
    const calls = list.locator('details.t-call > summary');
    // Each with how long it ran, from Claude Code's own timestamps (issue 40).
    const took = String.raw` (\d+ ms|\d+\.\d s|\d+ min \d+ s)( · slow: \d+% of the run)?$`;
    expect(await calls.allTextContents()).toEqual([
      expect.stringMatching(new RegExp(String.raw`^Read .*src/app\.js ✓${took}`)),
      expect.stringMatching(new RegExp(String.raw`^Edit .*src/app\.js ✓${took}`)),
      expect.stringMatching(new RegExp(`^Bash printf .*✓${took}`)),
      expect.stringMatching(new RegExp(String.raw`^Read .*\.agents/INDEX\.md ✗ refused \(\w+\)${took}`)),
    ]);
    // Counted at the top, and a filter that shows only them.
    const marked = await refused.count();
    expect(await page.locator('#transcript-refusals').textContent()).toBe(`${marked} refused`);
    await page.locator('#transcript-only-refused').check();
    expect(await list.locator('.t-entry:visible').count()).toBe(marked);
    await page.locator('#transcript-only-refused').uncheck();

    // The same list node from now on: entries are appended, never drawn again.
    await page.evaluate(() => {
      (globalThis as any).document.getElementById('transcript-list').keptAcrossUpdates = true;
    });

    // A message injected from the page while ACTIVE (its in-page dialog, web/ask.js).
    await page.getByRole('button', { name: 'Inject' }).click();
    await page.getByLabel('Message for the agent').fill(NOTE);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#toast', { hasText: 'queued' }).waitFor();

    // The Bash call's result, by the keyboard: Tab to its summary, Enter, the output is there.
    await page.evaluate('document.activeElement?.blur()');
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const on = await page.evaluate('document.activeElement?.textContent ?? ""');
      if (/^Bash printf/.test(on as string)) break;
    }
    await page.keyboard.press('Enter');
    const bashCall = list.locator('details.t-call', { hasText: 'Bash printf' });
    expect(await bashCall.getAttribute('open')).not.toBeNull();
    const result = bashCall.locator('.t-result pre');
    expect(await result.textContent()).toContain(HOSTILE);
    expect(await result.textContent()).not.toContain('3000');
    // Cut: "Show all" fetches it whole.
    await bashCall.getByRole('button', { name: /^Show all \(\d[\d,]* characters\)$/ }).click();
    await page.waitForFunction(() =>
      (globalThis as any).document
        .querySelector('#transcript-list details[open] .t-result pre')
        ?.textContent.trimEnd()
        .endsWith('2999\n3000'),
    );

    // The rest comes in while the call stays open: the note, the correction, the end. A person at
    // the bottom of the page stays at the bottom: the page follows what comes.
    const entry = (re: RegExp) => list.locator('.t-entry', { hasText: re }).first();
    const bottom = 'innerHeight + scrollY >= document.documentElement.scrollHeight - 40';
    expect(await page.evaluate('document.documentElement.scrollHeight > innerHeight')).toBe(true);
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    expect(await page.evaluate(bottom)).toBe(true);
    await entry(new RegExp(`injected ${NOTE}`)).waitFor({ timeout: 90_000 });
    expect(p.state(name).status).toBe('ACTIVE');
    expect(await page.evaluate(bottom)).toBe(true);
    await entry(/correction \(claude.*check the edit once more/).waitFor({ timeout: 90_000 });
    await entry(/supervisor: complete/).waitFor({ timeout: 90_000 });
    expect(await bashCall.getAttribute('open')).not.toBeNull();
    expect(
      await page.evaluate(
        () => (globalThis as any).document.getElementById('transcript-list').keptAcrossUpdates,
      ),
    ).toBe(true);
    // In order, each with a time.
    const texts = await list.locator('.t-entry').allTextContents();
    const at = (re: RegExp) => texts.findIndex((t) => re.test(t));
    const order = [
      at(/Read .*src\/app\.js/),
      at(/Edit /),
      at(/Bash printf/),
      at(/INDEX\.md ✗ refused/),
      at(/assistant First pass done/),
      at(new RegExp(`injected ${NOTE}`)),
      at(/Read README as asked/),
      at(/correction \(claude/),
      at(/Checked: app\.js returns 2/),
      at(/supervisor: complete/),
    ];
    expect(
      order.every((i) => i >= 0),
      texts.join('\n'),
    ).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // (one look at the list: an entry that comes between two counts is no entry without a time)
    const [timed, all] = await list.evaluate((el) => [
      el.querySelectorAll('.t-entry > time').length,
      el.querySelectorAll('.t-entry').length,
    ]);
    expect(timed).toBe(all);

    // The agent's markup, in its text and in a tool's output, is text: no element, nothing ran.
    expect(await entry(/assistant First pass done/).textContent()).toContain(HOSTILE);
    expect(await page.locator('#transcript script, #transcript img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();

    await page.locator('[data-status="REVIEW"]').waitFor({ timeout: 60_000 });
    // Each turn and how long it took, from events.jsonl (issue 40): the message delivered at the
    // first Stop, the supervisor's correction at the second, its complete at the third.
    const steps = page.locator('#transcript-steps > li');
    await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(3);
    expect(await steps.allTextContents()).toEqual([
      expect.stringMatching(/^turn 1 \(inject\) \d/),
      expect.stringMatching(/^turn 2 \(continue\) \d/),
      expect.stringMatching(/^turn 3 \(complete\) \d/),
    ]);
    expect(await violations()).toEqual([]);
  }, 240_000);
});
