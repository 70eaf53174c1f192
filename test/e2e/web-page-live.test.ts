import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, hang, text, type Usage } from '../fixtures/model-server/index.js';
import { axeLightAndDark } from '../helpers/axe.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';
import { CHROMIUM, launchChromium, logIn, startUi, type Ui } from '../helpers/ui.js';

/** An agent's turn as a real session reports it: enough tokens for a cost agentbox estimates. */
const TURN: Usage = { input_tokens: 1200, cache_read_input_tokens: 30_000, output_tokens: 150 };

/**
 * Issue 30, "the page, as a person walking through it in Chromium found it": a live update keeps
 * what the person holds (focus, an opened Prompt, text typed in the search box), the keyboard
 * reaches and operates every button, an error stays beside the action until dismissed, a
 * sensitive merge waits for each change to be ticked, a server that is gone is said in words, the
 * cost of a running run does not go back and ages tick without asking the server.
 */
describe('the live page in Chromium', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications', 'clipboard-read', 'clipboard-write'], {
      origin: ui.url,
    });
    page = await context.newPage();
    await logIn(page, ui);
  }, 60_000);
  afterAll(async () => {
    // A run a failed test left ACTIVE.
    for (const name of p?.runs() ?? [])
      if (p.state(name).status === 'ACTIVE') await p.agentbox(['stop', name.slice(-6)]);
    await browser?.close();
    await ui?.stop();
  });

  /** The page's DOM, from this Node project (it has no DOM types). */
  const doc = 'document' as const;
  /** What has the keyboard focus: its tag, its text if it is a button or a summary, its id. */
  const focused = (): Promise<{ tag: string; text: string | null; id: string; kept: boolean }> =>
    page.evaluate((d) => {
      const el = (globalThis as any)[d].activeElement;
      const named = el?.tagName === 'BUTTON' || el?.tagName === 'SUMMARY';
      return {
        tag: el?.tagName ?? '',
        text: named ? (el.textContent ?? '') : null,
        id: el?.id ?? '',
        kept: el?.keptAcrossUpdates === true,
      };
    }, doc);
  /** Marks the focused element with a property only that very node carries. */
  const markFocused = () =>
    page.evaluate((d) => {
      (globalThis as any)[d].activeElement.keptAcrossUpdates = true;
    }, doc);

  /** Presses Tab from the top of the page until the focus leaves it; each stop's tag and text. */
  const tabStops = async (max = 80) => {
    await page.evaluate('document.activeElement?.blur()');
    const stops: { tag: string; text: string | null }[] = [];
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const stop = await focused();
      if (stop.tag === 'BODY' || stop.tag === '') break;
      stops.push({ tag: stop.tag, text: stop.text });
    }
    return stops;
  };
  const tabUntil = async (text: string, max = 80) => {
    await page.evaluate('document.activeElement?.blur()');
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if ((await focused()).text === text) return;
    }
    throw new Error(`no Tab stop "${text}" within ${max} presses`);
  };

  /**
   * A live update, as a run's write makes one: INDEX.jsonl touched (the ledger's log, watched for
   * every run), the watcher's SSE `change`, the page drawn again. Waits until it has been drawn.
   */
  const liveUpdate = async () => {
    const before = await page.evaluate('document.body.dataset.rendered');
    const file = path.join(p.repo.dir, '.agents', 'INDEX.jsonl');
    const later = new Date(Date.now() + Math.floor(Math.random() * 1e6));
    fs.utimesSync(file, later, later);
    await page.waitForFunction((b) => (globalThis as any).document.body.dataset.rendered !== b, before, {
      timeout: 10_000,
    });
  };

  /** axe-core's serious and critical violations on the page as it is now, light and dark. */
  const violations = () => axeLightAndDark(page);

  /** A POST from the page itself (its session cookie and the key it keeps): its status and answer. */
  const post = (url: string, body: unknown) =>
    page.evaluate(
      async ({ url, body }) => {
        const g = globalThis as any;
        const csrf = g.localStorage.getItem('agentbox.key');
        const res = await g.fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-agentbox-csrf': csrf },
          body: JSON.stringify(body),
        });
        return { status: res.status as number, json: await res.json() };
      },
      { url, body },
    );

  it('an ACTIVE run: live updates keep the focus, the opened Prompt and the search text; the keyboard operates Inject and Stop; the cost holds and ages tick', async () => {
    const task = 'TASK-LIVE watch me';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: { ...bash('true'), usage: TURN } },
      // Past the 2 s between two of the run's state writes: the usage is written before it hangs.
      { when: { anyText: task, turn: 1 }, reply: { ...bash('true'), usage: TURN, delayMs: 2500 } },
      { when: { anyText: task }, reply: hang() },
    ]);
    const started = await p.agentbox(['scout', task, '--detach', '--json']);
    const name = JSON.parse(started.stdout).run as string;
    const id = name.slice(-6);
    await page.goto(`${page.url().split('#')[0]}#/run/${id}`);
    await page.locator('[data-status="ACTIVE"]').waitFor();
    await waitFor(() => (p.state(name).usage?.agent?.cost_usd ?? 0) > 0, 'the estimated cost', {
      timeoutMs: 60_000,
    });
    await liveUpdate();

    // The keyboard: every button and the Prompt, in the page's order, each a Tab stop; then the
    // transcript's search (its Previous and Next) and tool calls (web/transcript.js), each a
    // summary to open: both Bash calls with their results (the third turn hangs).
    const answered = page.locator('#transcript summary .t-mark-ok');
    await expect.poll(() => answered.count(), { timeout: 60_000 }).toBe(2);
    const calls = await page.locator('#transcript summary').allTextContents();
    const stops = (await tabStops()).filter((s) => s.tag === 'BUTTON' || s.tag === 'SUMMARY');
    expect(stops.map((s) => s.text)).toEqual(['Stop', 'Inject', 'Prompt', 'Previous', 'Next', ...calls]);
    // The live run page, in both themes, wide and as narrow as a phone.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      const live = await violations();
      expect(live, `${width}px\n${live.join('\n')}`).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // Focus on Inject: a live update keeps it, on the very same button.
    await tabUntil('Inject');
    await markFocused();
    await liveUpdate();
    await liveUpdate();
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Inject', kept: true });

    // Space on Inject asks for the message in the page (a labelled multi-line field, not the
    // browser's one-line prompt), the keyboard writes and sends it; the focus comes back to Inject.
    let prompted = false;
    page.once('dialog', () => {
      prompted = true;
    });
    await page.keyboard.press('Space');
    const ask = page.getByRole('dialog', { name: /^Message for / });
    await ask.waitFor();
    expect(await page.evaluate('document.activeElement.id')).toBe('ask-text');
    const inDialog = await axeLightAndDark(page, '#ask');
    expect(inDialog, inDialog.join('\n')).toEqual([]);
    await page.keyboard.type('please also read README');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('and the docs');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Send' });
    await page.keyboard.press('Enter');
    await page.locator('#toast', { hasText: 'queued' }).waitFor();
    expect(prompted).toBe(false);
    expect(await ask.count()).toBe(0);
    await liveUpdate();
    expect(await focused()).toMatchObject({ text: 'Inject', kept: true });
    const inbox = path.join(p.runDir(name), 'inbox', 'pending');
    expect(fs.readdirSync(inbox)).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(path.join(inbox, fs.readdirSync(inbox)[0]!), 'utf8')).text).toBe(
      'please also read README\nand the docs',
    );
    // Escape leaves the dialog and sends nothing.
    await page.keyboard.press('Space');
    await ask.waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#toast', { hasText: 'nothing sent' }).waitFor();
    expect(fs.readdirSync(inbox)).toHaveLength(1);
    expect(await focused()).toMatchObject({ text: 'Inject' });

    // Enter on Prompt opens it; a live update leaves it open and keeps the focus on it.
    await tabUntil('Prompt');
    await page.keyboard.press('Enter');
    expect(await page.locator('#prompt').getAttribute('open')).not.toBeNull();
    await liveUpdate();
    expect(await page.locator('#prompt').getAttribute('open')).not.toBeNull();
    expect(await focused()).toMatchObject({ text: 'Prompt', kept: false });
    // Scrolled to the end of the opened prompt: a live update leaves the page where it was.
    await page.setViewportSize({ width: 1280, height: 300 });
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    const scrolled = await page.evaluate('window.scrollY');
    expect(scrolled).toBeGreaterThan(0);
    await liveUpdate();
    expect(await page.evaluate('window.scrollY')).toBe(scrolled);
    await page.setViewportSize({ width: 1280, height: 800 });

    // The cost, estimated while Claude Code has not stated it yet, says so.
    expect(await page.locator('#cost').textContent()).toMatch(/≈\$0\.\d{4}$/);

    // The runs list: text typed in the search box (not committed yet) survives a live update.
    await page.goto(`${page.url().split('#')[0]}#/`);
    const row = page.locator(`tr[data-run="${name}"]`);
    await row.waitFor();
    const cost = await row.locator('td').nth(5).textContent();
    expect(cost).toMatch(/^\$0\.\d{4}$/);
    await page.locator('#f-q').click();
    await page.keyboard.type('TASK-LI');
    await markFocused();
    await liveUpdate();
    expect(await focused()).toMatchObject({ id: 'f-q', kept: true });
    expect(await page.locator('#f-q').inputValue()).toBe('TASK-LI');
    // Committed, the filter lists the run with its cost as of now, never less (a filtered list
    // came from INDEX.jsonl, as of the run's last status change: "—" here). The run may have
    // spent more meanwhile (its second turn).
    await page.keyboard.type('VE');
    await page.keyboard.press('Enter');
    await liveUpdate();
    expect(await page.locator('tbody tr').count()).toBe(1);
    const filtered = (await row.locator('td').nth(5).textContent()) ?? '';
    expect(filtered).toMatch(/^\$0\.\d{4}$/);
    expect(Number(filtered.slice(1))).toBeGreaterThanOrEqual(Number(cost!.slice(1)));

    // Ages tick from the browser's clock: the text changes with no redraw (no request) between.
    // The row's age is set to a few seconds ago in the page (the run itself may be minutes old on
    // a slow machine, when its age changes once a minute); a heartbeat redraw every 15 s puts the
    // real one back, and a tick that met one is tried again.
    let ticked = false;
    for (let attempt = 0; attempt < 3 && !ticked; attempt++) {
      const before = await page.evaluate(() => {
        const d = (globalThis as any).document;
        const el = d.querySelector('tbody time');
        el.setAttribute('data-since', new Date(Date.now() - 3000).toISOString());
        return { rendered: d.body.dataset.rendered, age: el.textContent };
      });
      const changed = await page
        .waitForFunction(
          (was) => {
            const text = (globalThis as any).document.querySelector('tbody time')?.textContent;
            return text !== was && /^\d+s$/.test(text) ? text : false;
          },
          before.age,
          { timeout: 5000 },
        )
        .then(() => true)
        .catch(() => false);
      ticked = changed && (await page.evaluate('document.body.dataset.rendered')) === before.rendered;
    }
    expect(ticked).toBe(true);

    // Stop, by the keyboard, on the run page.
    await page.locator('#f-q').fill('');
    await page.locator('#f-q').press('Enter');
    await page.goto(`${page.url().split('#')[0]}#/run/${id}`);
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await tabUntil('Stop');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.keyboard.press('Space');
    await page.locator('[data-status="ABORTED"]').waitFor({ timeout: 60_000 });
    expect(p.state(name).status).toBe('ABORTED');
    // Resume asks for its optional instructions in the page too; Escape leaves it, nothing resumed.
    await tabUntil('Resume');
    await page.keyboard.press('Enter');
    const resume = page.getByRole('dialog', { name: /^Resume / });
    await resume.waitFor();
    expect(await page.evaluate('document.activeElement.id')).toBe('ask-text');
    expect(await page.getByLabel('More instructions (optional)').count()).toBe(1);
    await page.keyboard.press('Escape');
    await page.locator('#toast', { hasText: 'not resumed' }).waitFor();
    expect(await focused()).toMatchObject({ text: 'Resume' });
    expect(p.state(name).status).toBe('ABORTED');
  }, 150_000);

  it('the runs list: the keyboard reaches Notify me and operates it', async () => {
    await page.goto(`${page.url().split('#')[0]}#/`);
    await page.locator('tbody tr').first().waitFor();
    const stops = await tabStops();
    const order = stops.map((s) => s.tag);
    // The filters, then the button, then the runs.
    expect(order.indexOf('SELECT')).toBeLessThan(order.indexOf('BUTTON'));
    expect(order.indexOf('BUTTON')).toBeLessThan(order.indexOf('TR'));
    expect(stops.filter((s) => s.tag === 'BUTTON').map((s) => s.text)).toEqual(['Notify me']);
    await tabUntil('Notify me');
    await page.keyboard.press('Enter');
    await page.locator('#toast', { hasText: 'you will be notified' }).waitFor();
  });

  it('a merge conflict: the error and its recovery commands stay beside Merge, copyable, until dismissed', async () => {
    const task = 'TASK-LIVE-CONFLICT make app return 2';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash("printf 'module.exports = 2;\\n' > src/app.js") },
      { when: { anyText: task }, reply: text('app.js returns 2.') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const name = p.newest();
    fs.writeFileSync(path.join(p.repo.dir, 'src/app.js'), 'module.exports = 3;\n');
    p.repo.git('commit', '-qam', 'three, meanwhile');

    await page.goto(`${page.url().split('#')[0]}#/run/${name.slice(-6)}`);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Merge' }).click();
    const error = page.locator('#action-error');
    await error.waitFor();
    const shown = (await page.locator('#action-error-text').textContent()) ?? '';
    expect(shown).toContain('do not apply');
    expect(shown).toContain('src/app.js');
    expect(shown).toMatch(/git apply --3way|agentbox/);
    // One clause after the colon (it read "…since the run started: or merge by hand").
    expect(shown).toContain('since the run started: merge by hand (git apply --3way');
    expect(shown).not.toContain(': or ');
    expect(await error.getAttribute('role')).toBe('alert');
    // Past the toast's 6 s, and through a live update of the ledger: still there.
    await page.waitForTimeout(6500);
    await liveUpdate();
    expect(await error.isVisible()).toBe(true);
    expect(await violations()).toEqual([]);
    // Selectable, and Copy (by the keyboard) puts the exact text on the clipboard.
    const selectable = await page.evaluate(
      "getComputedStyle(document.getElementById('action-error-text')).userSelect",
    );
    expect(selectable).not.toBe('none');
    await tabUntil('Copy');
    await page.keyboard.press('Enter');
    await page.locator('#toast', { hasText: 'copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(shown);
    // Dismissed: gone, and the focus back on the action that failed.
    await tabUntil('Dismiss');
    await page.keyboard.press('Space');
    await error.waitFor({ state: 'detached' });
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Merge' });
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 3;\n');
  }, 120_000);

  it('a form that fails (a new run, a template): its error stays beside its button, copyable, until dismissed', async () => {
    const base = page.url().split('#')[0];
    await page.goto(`${base}#/new`);
    await page.getByLabel('Task').fill('TASK-LIVE-BAD-BUDGET');
    await page.getByLabel('Budget (USD)').fill('lots');
    await page.getByLabel('Timeout').fill('soon');
    await page.getByRole('button', { name: 'Start' }).click();
    const error = page.locator('#new-run [role="alert"]');
    await error.waitFor();
    // Every bad field, not the first: both named, both marked, the focus on the first.
    expect(await error.textContent()).toMatch(/Start failed[\s\S]*soon[\s\S]*lots/);
    expect(await page.getByLabel('Timeout').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Budget (USD)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Task').getAttribute('aria-invalid')).toBeNull();
    expect(await page.evaluate('document.activeElement.id')).toBe('n-timeout');
    // Past the toast's 6 s: still there, and the form as the person filled it.
    await page.waitForTimeout(6500);
    expect(await error.isVisible()).toBe(true);
    expect(await page.getByLabel('Budget (USD)').inputValue()).toBe('lots');
    expect(await violations()).toEqual([]);
    await error.getByRole('button', { name: 'Copy' }).click();
    await page.locator('#toast', { hasText: 'copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(
      await error.locator('.error-text').textContent(),
    );
    await error.getByRole('button', { name: 'Dismiss' }).click();
    await error.waitFor({ state: 'detached' });
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Start' });

    await page.goto(`${base}#/settings`);
    await page.getByLabel('template file').selectOption('fix.input.md');
    // Saved, then broken at once: the failure does not sit beside the last save's "saved".
    await page.getByLabel('template text').fill('Fix it well.\n');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.locator('#toast', { hasText: 'template saved' }).waitFor();
    await page.getByLabel('template text').fill('Broken {{nope}}');
    await page.getByRole('button', { name: 'Save template' }).click();
    const broken = page.locator('#templates [role="alert"]');
    await broken.waitFor();
    expect(await page.locator('#toast').isVisible()).toBe(false);
    expect(await broken.textContent()).toMatch(/Save template failed[\s\S]*nope/);
    expect(await violations()).toEqual([]);
    await broken.getByRole('button', { name: 'Dismiss' }).click();
    await broken.waitFor({ state: 'detached' });
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Save template' });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.locator('#t-note').textContent()).toContain('built-in default');
    expect(fs.existsSync(path.join(p.repo.dir, '.agentbox', 'templates', 'fix.input.md'))).toBe(false);
  }, 60_000);

  it("a run started without the repository's untrusted setup says so on its page, not in a 6 s toast", async () => {
    const yaml = path.join(p.repo.dir, 'agentbox.yaml');
    const before = fs.readFileSync(yaml, 'utf8');
    p.server.setRules([{ when: { anyText: 'TASK-LIVE-UNTRUSTED' }, reply: text('looked') }]);
    try {
      // A setup command the person has not trusted yet (the file changed since they did).
      const planted = before.replace(/^ {2}setup:.*$/m, '  setup: "echo planted"');
      expect(planted).not.toBe(before);
      fs.writeFileSync(yaml, planted);
      await page.goto(`${page.url().split('#')[0]}#/new`);
      await page.getByLabel('Type').selectOption('scout');
      await page.getByLabel('Task').fill('TASK-LIVE-UNTRUSTED look around');
      await page.getByRole('button', { name: 'Start' }).click();
      await page.waitForURL(/#\/run\/[0-9a-f]{6}$/);
    } finally {
      fs.writeFileSync(yaml, before);
    }
    await page.locator('[data-status="DONE"]').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(6500);
    await liveUpdate();
    const panel = page.locator('#untrusted');
    expect(await panel.isVisible()).toBe(true);
    expect(await panel.textContent()).toMatch(/runs\.setup[\s\S]*echo planted[\s\S]*agentbox trust/);
    expect(await violations()).toEqual([]);
  }, 90_000);

  it('a sensitive merge: Merge waits until each change is ticked, and the server refuses without them', async () => {
    const task = 'TASK-LIVE-SENSITIVE add a workflow';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: bash("mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/x.yml"),
      },
      { when: { anyText: task }, reply: text('added a workflow') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const name = p.newest();
    const id = name.slice(-6);
    await page.goto(`${page.url().split('#')[0]}#/run/${id}`);
    await page.locator('#sensitive').waitFor();
    const merge = page.getByRole('button', { name: 'Merge' });
    expect(await violations()).toEqual([]);
    // Waiting for the ticks, Merge is still a Tab stop that says why; Enter on it leads to the tick.
    expect(await merge.getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator('#merge-why').textContent()).toContain('tick');
    await tabUntil('Merge');
    expect(await page.evaluate('document.activeElement.getAttribute("aria-describedby")')).toBe('merge-why');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.className')).toBe('ack');
    expect(p.state(name).status).toBe('REVIEW');

    // The server holds the gate whatever the page sends: every spelling but the path itself.
    const wrong: unknown[] = [
      {},
      { allow_sensitive: true },
      { acknowledged: [] },
      { acknowledged: '.github/workflows/x.yml' },
      { acknowledged: ['.github/workflows/X.yml'] },
      { acknowledged: ['.github/workflows/x.yml/'] },
      { acknowledged: ['./.github/workflows/x.yml'] },
      { acknowledged: [['.github/workflows/x.yml']] },
      { acknowledged: { 0: '.github/workflows/x.yml', length: 1 } },
    ];
    for (const body of wrong) {
      const r = await post(`/api/runs/${id}/merge`, body);
      expect(r.status, JSON.stringify(body)).toBe(409);
      expect(r.json.code).toBe('MERGE_REFUSED');
    }
    expect(fs.existsSync(path.join(p.repo.dir, '.github/workflows/x.yml'))).toBe(false);
    const refusals = p.events(name).filter((e) => e.event === 'merge_refused' && e.reason === 'sensitive');
    expect(refusals).toHaveLength(wrong.length);
    expect(refusals[0]).toMatchObject({ by: 'ui', detail: '.github/workflows/x.yml' });

    // Ticked by the keyboard, Merge opens; one confirmation, and it is merged.
    const box = page.getByLabel(/I have read this: \.github\/workflows\/x\.yml — ci/);
    await box.focus();
    await page.keyboard.press('Space');
    await page.waitForFunction(
      () =>
        !(globalThis as any).document.querySelector('[data-action="merge"]').hasAttribute('aria-disabled'),
    );
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await merge.click();
    await page.locator('[data-status="MERGED"]').waitFor();
    expect(asked).toContain('.github/workflows/x.yml (ci)');
    expect(fs.readFileSync(path.join(p.repo.dir, '.github/workflows/x.yml'), 'utf8')).toBe('on: push\n');
  }, 120_000);

  it('the server gone: the page says so in words, and reconnects when it is back (or says why it cannot)', async () => {
    await page.goto(`${page.url().split('#')[0]}#/`);
    await page.locator('#live.on').waitFor();
    expect(await page.locator('#live-text').textContent()).toBe('');
    const port = ui.port;
    ui.child.kill('SIGKILL');
    await ui.stop();
    const said = page.locator('#live-text', { hasText: 'agentbox ui is not answering — reconnecting…' });
    await said.waitFor({ timeout: 15_000 });
    expect(await said.isVisible()).toBe(true);
    expect(await violations()).toEqual([]);
    // Started again, it listens where it did (the port it keeps), and the open page finds it.
    ui = await startUi(p.repo.dir, p.env);
    expect(ui.port).toBe(port);
    await page.locator('#live.on').waitFor({ timeout: 30_000 });
    expect(await page.locator('#live-text').textContent()).toBe('');
    // Started again with new secrets, it answers but no longer knows this page: said so, not "reconnecting".
    await ui.stop();
    ui = await startUi(p.repo.dir, p.env, ['--new-token', '--port', String(port)]);
    await page
      .locator('#live-text', {
        hasText: 'agentbox ui no longer knows this page — open the address it printed',
      })
      .waitFor({ timeout: 15_000 });
  }, 60_000);

  it('no process is left behind', async () => {
    await browser.close();
    expect(await ui.stop()).toBe(130);
    await expectNoProcessesLeft(p.tag);
  });
});
