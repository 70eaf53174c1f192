import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE } from '../../bench/ledger-fixture.js';
import { createRun, openLedger, type RunStatus, updateState } from '../../src/ledger/index.js';
import { axeLightAndDark } from '../helpers/axe.js';
import { type Project, project } from '../helpers/project.js';
import { CHROMIUM, launchChromium, logIn, request, startUi, type Ui } from '../helpers/ui.js';

/** Tool calls in the long run: two list entries each (the text, the call), past 8,000. */
const CALLS = 4_200;
const T0 = Date.UTC(2026, 0, 1);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** stream-json as Claude Code writes it: a text and a call, then the call's result. */
function streamLines(calls: number): string {
  const out: string[] = [];
  for (let k = 0; k < calls; k++) {
    const id = `toolu_${k}`;
    const content = [
      { type: 'text', text: `Step ${k}: reading.` },
      { type: 'tool_use', id, name: 'Bash', input: { command: `cat src/file-${k}.ts` } },
    ];
    out.push(
      JSON.stringify({ type: 'assistant', timestamp: at(k), message: { role: 'assistant', content } }),
    );
    const result = [{ type: 'tool_result', tool_use_id: id, content: `line ${k}\n` }];
    out.push(JSON.stringify({ type: 'user', timestamp: at(k), message: { role: 'user', content: result } }));
  }
  return `${out.join('\n')}\n`;
}

/** A new file of `n` lines, as git diff writes it. */
const newFile = (name: string, n: number, line: (i: number) => string) =>
  [
    `diff --git a/${name} b/${name}`,
    'new file mode 100644',
    'index 0000000..1111111',
    '--- /dev/null',
    `+++ b/${name}`,
    `@@ -0,0 +1,${n} @@`,
    ...Array.from({ length: n }, (_, i) => `+${line(i + 1)}`),
  ].join('\n');

const SMALL = [
  'diff --git a/src/small.js b/src/small.js',
  'index 2222222..3333333 100644',
  '--- a/src/small.js',
  '+++ b/src/small.js',
  '@@ -1,3 +1,3 @@',
  ' const a = 1;',
  '-const b = 2;',
  '+const b = 3;',
  ' module.exports = a + b;',
].join('\n');
/** A small file, a 600-line one (over 400: collapsed) and a lock file (generated: collapsed). */
const PATCH = `${[
  SMALL,
  newFile('src/big.js', 600, (i) => `export const v${i} = ${i};`),
  newFile('package-lock.json', 12, (i) => `  "k${i}": ${i},`),
].join('\n')}\n`;

/**
 * Issue 40, deep links, error first and large files collapsed: runs written with the ledger's own
 * functions (a transcript of 4,200 calls no scripted session would make in time), opened in
 * Chromium. A link to an entry or a diff line opens the page there, highlighted and focused, in a
 * fresh browser after the token exchange; entry 8,000 is reached through the transcript's pages; a
 * failed run opens at what failed; a large or generated file is collapsed until "Load diff".
 */
describe('deep links, error first and collapsed files on the run page (Chromium)', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const runs: Record<string, string> = {};

  /** A fix run ended `status`, with events (ts from the stream's clock), a stream and a patch. */
  async function fixture(
    key: string,
    status: RunStatus,
    options: {
      failure?: { kind: string; message: string };
      events?: object[];
      calls?: number;
      patch?: string;
    },
  ) {
    const ledger = openLedger(p.repo.dir);
    const run = await createRun(ledger, {
      type: 'fix',
      task: `TASK-${key}`,
      envelope: ENVELOPE,
      repoShaStart: null,
    });
    await updateState(ledger, run.name, {
      status,
      failure: (options.failure ?? null) as never,
      session_id: 'sess-1',
      tool_calls: options.calls ?? 0,
    });
    fs.writeFileSync(path.join(run.dir, 'raw', 'stream.jsonl'), streamLines(options.calls ?? 3));
    const lines = (options.events ?? []).map((e) => JSON.stringify(e));
    if (lines.length) fs.appendFileSync(path.join(run.dir, 'events.jsonl'), `${lines.join('\n')}\n`);
    if (options.patch) fs.writeFileSync(path.join(run.dir, 'changes.patch'), options.patch);
    runs[key] = run.name.slice(-6);
  }

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project({ files: { 'src/small.js': 'const a = 1;\nconst b = 2;\nmodule.exports = a + b;\n' } });
    await fixture('LONG', 'REVIEW', { calls: CALLS, patch: PATCH });
    await fixture('VERIFY', 'REVIEW', {
      patch: `${SMALL}\n`,
      events: [
        { ts: at(1), event: 'verify', ok: true, detail: 'first pass' },
        {
          ts: at(2),
          event: 'verify',
          ok: false,
          detail: '`npm test` failed (exit code 1): FAIL expected 3, got 2',
        },
      ],
    });
    await fixture('DONE', 'DONE', { patch: PATCH });
    await fixture('CRASH', 'CRASHED', {
      failure: { kind: 'crashed', message: 'claude exited with code 139' },
    });
    await fixture('ABORT', 'ABORTED', {
      failure: { kind: 'agent_abort', message: 'looping on the same edit' },
      events: [{ ts: at(2), decision: 'abort', source: 'claude', reason: 'looping on the same edit' }],
    });
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });
    page = await context.newPage();
    await logIn(page, ui);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    await p?.cleanup();
  });

  /** Run `key`'s page, from another page (a hash change alone answers before the page is drawn). */
  async function open(key: string) {
    await page.goto(`${ui.url}/#/`);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.goto(`${ui.url}/#/run/${runs[key]}`);
    await page.locator('#title', { hasText: `TASK-${key}` }).waitFor();
  }

  /** A browser that has never seen the server: opens `link` (the login page), then the printed address. */
  async function freshBrowserOpens(link: string): Promise<Page> {
    const fresh = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const first = await fresh.goto(link);
    expect(first?.status()).toBe(401);
    await fresh.locator('#kept').waitFor();
    await fresh.goto(ui.loginUrl);
    await fresh.waitForURL(link, { timeout: 10_000 });
    return fresh;
  }

  /** The element that has the keyboard focus is `selector`'s first match, and it is on screen. */
  const focusedAndSeen = async (on: Page, selector: string) => {
    expect(
      await on.evaluate(
        (s) => (globalThis as any).document.activeElement === (globalThis as any).document.querySelector(s),
        selector,
      ),
    ).toBe(true);
    const box = await on.locator(selector).first().boundingBox();
    expect(box && box.y >= 0 && box.y + Math.min(box.height, 40) <= 800).toBe(true);
  };

  it('a link copied from an entry opens it in a fresh browser after the token exchange; entry 8,000 is reached through the pages', async () => {
    await open('LONG');
    const fifth = page.locator('#transcript-list > li').nth(4);
    await fifth.waitFor();
    expect(await page.evaluate('scrollY')).toBe(0); // a run that passed opens at the top
    const key = await fifth.getAttribute('data-key');
    await fifth.getByRole('link', { name: 'Link to this entry' }).click();
    const link = `${ui.url}/#/run/${runs.LONG}/entry/${encodeURIComponent(key!)}`;
    expect(page.url()).toBe(link);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(link);
    await page.locator(`#transcript-list > li.is-target[data-key="${key}"]`).waitFor();

    const again = await freshBrowserOpens(link);
    await again.locator(`#transcript-list > li.is-target[data-key="${key}"]`).waitFor();
    await focusedAndSeen(again, '#transcript-list > li.is-target');
    await again.context().close();
    // The printed address with the place after it: the redirect to `/` keeps the fragment.
    const withToken = await (await browser.newContext()).newPage();
    await withToken.goto(`${ui.loginUrl}#/run/${runs.LONG}/entry/${encodeURIComponent(key!)}`);
    await withToken.waitForURL(link);
    await withToken.locator(`#transcript-list > li.is-target[data-key="${key}"]`).waitFor();
    await withToken.context().close();

    // Entry 8,000 (its id read from the API's pages), far past the 200 the page shows first.
    let cursor = '';
    const ids: string[] = [];
    while (ids.length < 8_000) {
      const res = await request(
        ui.port,
        `/api/runs/${runs.LONG}/transcript?limit=1000${cursor ? `&after=${cursor}` : ''}`,
        {
          headers: { authorization: `Bearer ${ui.token}` },
        },
      );
      const body = res.json();
      ids.push(...body.entries.filter((e: any) => e.kind !== 'tool_result').map((e: any) => e.id));
      cursor = body.next;
    }
    const far = ids[7_999]!;
    const farLink = `${ui.url}/#/run/${runs.LONG}/entry/${encodeURIComponent(far)}`;
    const fresh = await freshBrowserOpens(farLink);
    const target = fresh.locator(`#transcript-list > li.is-target[data-key="${far}"]`);
    await target.waitFor({ timeout: 60_000 });
    expect(
      await fresh.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll('#transcript-list > li')].findIndex((li: any) =>
          li.classList.contains('is-target'),
        ),
      ),
    ).toBe(7_999);
    await focusedAndSeen(fresh, '#transcript-list > li.is-target');
    // A tool call opened there shows its input at once.
    expect(await target.locator('details.t-call').getAttribute('open')).not.toBeNull();
    await fresh.context().close();
  }, 120_000);

  it('a diff line links to itself; a link into a collapsed file loads it; a wrong link says so', async () => {
    await open('LONG');
    // In REVIEW the line numbers of the new side are comment buttons: the comment box has the link.
    const line3 = page.getByRole('button', { name: 'Comment on src/small.js line 3' });
    await line3.click();
    await page.getByRole('link', { name: 'Link to this line' }).click();
    const link = `${ui.url}/#/run/${runs.LONG}/line/${encodeURIComponent('src/small.js')}/R3`;
    expect(page.url()).toBe(link);
    // A removed line is a comment button too (by its number before the change): its box links to it.
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Comment on src/small.js line 2 (removed)' }).click();
    await page.getByRole('link', { name: 'Link to this line' }).click();
    expect(page.url()).toBe(`${ui.url}/#/run/${runs.LONG}/line/${encodeURIComponent('src/small.js')}/L2`);
    await page.locator('tr.is-target', { hasText: 'const b = 2;' }).waitFor();

    const fresh = await freshBrowserOpens(link);
    await fresh.locator('tr.is-target', { hasText: 'module.exports = a + b;' }).waitFor();
    await focusedAndSeen(fresh, 'tr.is-target td.commentable');
    // Line 450 of the 600-line file, collapsed until asked for: the link loads it.
    const deep = `${ui.url}/#/run/${runs.LONG}/line/${encodeURIComponent('src/big.js')}/R450`;
    await fresh.goto(deep);
    await fresh.locator('tr.is-target', { hasText: 'export const v450 = 450;' }).waitFor();
    await focusedAndSeen(fresh, 'tr.is-target td.commentable');
    // A line that is not there: said, and the page stays as it is.
    await fresh.goto(`${ui.url}/#/run/${runs.LONG}/line/${encodeURIComponent('src/nope.js')}/R1`);
    await fresh.locator('#toast', { hasText: 'src/nope.js line 1 is not in this run' }).waitFor();
    await fresh.context().close();
  }, 120_000);

  it("a diff box's line links are one Tab stop: the arrow keys move among them, Enter follows one", async () => {
    await open('DONE');
    const box = page.locator('.d2h-file-wrapper', { hasText: 'src/small.js' });
    const links = box.locator('a.line-link');
    expect(await links.count()).toBeGreaterThan(3);
    const stops = () => box.locator('a.line-link[tabindex="0"]').count();
    expect(await stops()).toBe(1);
    await links.first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const focused = () =>
      page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label'));
    expect(await focused()).toMatch(/^Link to src\/small\.js line \d+/);
    const reached = await focused();
    expect(await stops()).toBe(1);
    await page.keyboard.press('End');
    expect(await focused()).not.toBe(reached);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/line\/src%2Fsmall\.js\/[LR]\d+$/);
    // The split view: each side is one stop, the removed side's context lines included.
    await open('LONG');
    await page.getByRole('button', { name: /split/i }).first().click();
    const sides = page
      .locator('.d2h-file-wrapper', { hasText: 'src/small.js' })
      .locator('.d2h-file-side-diff');
    await sides.nth(1).locator('td.commentable').first().waitFor();
    for (const side of [0, 1]) {
      const tabbable = sides.nth(side).locator('a.line-link[tabindex="0"], td.commentable[tabindex="0"]');
      const all = sides.nth(side).locator('a.line-link, td.commentable');
      expect(await all.count(), `side ${side}`).toBeGreaterThan(1);
      expect(await tabbable.count(), `side ${side}`).toBeLessThanOrEqual(2);
    }
    await page.getByRole('button', { name: /split/i }).first().click();
  });

  it('a large file and a lock file are collapsed with "Load diff", usable by keyboard, comments work on the loaded file, axe clean', async () => {
    await open('LONG');
    await page.locator('.d2h-file-wrapper').first().waitFor();
    const collapsed = page.locator('.d2h-file-wrapper.d2h-collapsed');
    expect(await collapsed.count()).toBe(2);
    expect(await collapsed.allTextContents()).toEqual([
      expect.stringMatching(/src\/big\.js[\s\S]*A large diff \(\+600 −0 lines\) is not shown\. Load diff/),
      expect.stringMatching(
        /package-lock\.json[\s\S]*A generated file \(\+12 −0 lines\) is not shown\. Load diff/,
      ),
    ]);
    // None of the big file's 600 lines is drawn until asked for; the file list counts them.
    expect(await page.locator('#diff tr', { hasText: 'export const v1 =' }).count()).toBe(0);
    expect(await page.locator('.d2h-file-list-line', { hasText: 'src/big.js' }).textContent()).toContain(
      '+600',
    );
    expect(await axeLightAndDark(page)).toEqual([]);
    // At phone width too: axe clean, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await axeLightAndDark(page, '#diff')).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    // By the keyboard: "Load diff" is a button (a Tab stop); Enter draws the file and puts the focus in it.
    const load = collapsed.first().getByRole('button', { name: 'Load diff' });
    await load.focus();
    await page.keyboard.press('Enter');
    const big = page.locator('.d2h-file-wrapper', { hasText: 'export const v1 = 1;' });
    await big.waitFor();
    expect(await big.locator('td.d2h-code-linenumber').count()).toBeGreaterThanOrEqual(600);
    expect(
      await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label')),
    ).toBe('changes to src/big.js');
    // The loaded file's lines take comments as the others do.
    await page.getByRole('button', { name: 'Comment on src/big.js line 7', exact: true }).press('Enter');
    await page.getByLabel('Your comment on src/big.js line 7').fill('why 7?');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.locator('tr.review-comment', { hasText: 'why 7?' }).waitFor();
    expect(await axeLightAndDark(page, '#diff .d2h-wrapper')).toEqual([]);
    // Open from now on: the split view draws it open too.
    await page.getByRole('button', { name: 'Unified / split' }).click();
    await page.locator('.d2h-file-side-diff', { hasText: 'export const v1 = 1;' }).first().waitFor();
    expect(await page.locator('.d2h-file-wrapper.d2h-collapsed').count()).toBe(1);
    await page.getByRole('button', { name: 'Unified / split' }).click();
  }, 120_000);

  it.each([
    [
      'VERIFY',
      'a failed runs.verify: its entry, with the output',
      '#transcript-list > li.is-target',
      /verification failed.*npm test. failed \(exit code 1\): FAIL expected 3, got 2/,
    ],
    [
      'ABORT',
      'a supervisor abort: its decision and reason',
      '#transcript-list > li.is-target',
      /supervisor: abort \(claude\) looping on the same edit/,
    ],
    ['CRASH', 'a crash: the failure panel', '#failure.is-target', /crashed: claude exited with code 139/],
  ])(
    'error first — %s opens at %s',
    async (key, _what, selector, text) => {
      await page.goto(`${ui.url}/#/`);
      await page.goto(`${ui.url}/#/run/${runs[key]}`);
      // Drawn for this address (draws are queued: the run drawn before may still be on screen).
      await page.locator(`main[data-page="#/run/${runs[key]}"]`).waitFor({ state: 'attached' });
      await page.locator(selector).waitFor();
      expect(await page.locator(selector).textContent()).toMatch(text);
      // A redraw (as a live update makes) keeps the mark and the focus where they were.
      const drawn = await page.evaluate(() => (globalThis as any).document.body.dataset.rendered);
      await page.evaluate(() => {
        const g = globalThis as any;
        g.dispatchEvent(new g.HashChangeEvent('hashchange'));
      });
      await page.waitForFunction(
        (before) => (globalThis as any).document.body.dataset.rendered !== before,
        drawn,
      );
      expect(await page.locator(selector).textContent()).toMatch(text);
      await focusedAndSeen(page, selector);
      expect(await page.locator('.is-target').count()).toBe(1);
      expect(await axeLightAndDark(page)).toEqual([]);
      // Back to the list and to the run again: a new visit, which opens at what failed again.
      await page.goto(`${ui.url}/#/`);
      await page.locator('main[data-page="#/"]').waitFor({ state: 'attached' });
      await page.goto(`${ui.url}/#/run/${runs[key]}`);
      await page.locator(`main[data-page="#/run/${runs[key]}"]`).waitFor({ state: 'attached' });
      await page.locator(selector).waitFor();
      expect(await page.locator(selector).textContent()).toMatch(text);
    },
    60_000,
  );
});
