import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, text } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { requestChanges } from '../helpers/review-page.js';
import { CHROMIUM, launchChromium, logIn, logInRaw, request, startUi, type Ui } from '../helpers/ui.js';

/** src/app.js before the run; the run removes its line 2 and adds a 400-line src/big.js. */
const APP = 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n';
const BIG_LINES = 400;

/**
 * Issue 39's line comments in Chromium, the two things the unified flow of web-page-a11y does not
 * cover: the split view (a removed line named by its number before the change, as in the unified
 * view, and sent so to the model) and the keyboard on a long diff (a box's lines are one Tab stop,
 * the arrow keys move among them, Merge and Request changes a few Tabs away).
 */
describe('line comments in Chromium: the split view and a 400-line diff by the keyboard', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let page: Page;
  let name = '';

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project({ files: { 'src/app.js': APP } });
    const task = 'TASK-LINES drop b, add big';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: bash(`sed -i 2d src/app.js && seq -f 'export const v%g = 1;' 1 ${BIG_LINES} > src/big.js`),
      },
      { when: { anyText: task }, reply: text('b dropped, big added.') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await logIn(page, ui);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
  });

  const openRun = async () => {
    await page.goto(`${ui.url}/#/run/${name.slice(-6)}`);
    // Drawn for this address (draws are queued: the page drawn before may still be on screen).
    await page.locator(`main[data-page="#/run/${name.slice(-6)}"]`).waitFor({ state: 'attached' });
    await page.locator('.d2h-file-wrapper').first().waitFor();
    await page.locator('td.commentable').first().waitFor();
  };

  /** What has the focus: its tag, name and whether its outline shows. */
  const focused = () =>
    page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      const style = (globalThis as any).getComputedStyle(el);
      return {
        tag: el.tagName as string,
        id: el.id as string,
        name: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 60) as string,
        outline: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 1,
      };
    });

  /** Presses `key` until the focus is on `target`'s name; the number of presses (throws past `max`). */
  const pressUntil = async (key: string, target: string, max = 60) => {
    for (let i = 1; i <= max; i++) {
      await page.keyboard.press(key);
      if ((await focused()).name === target) return i;
    }
    throw new Error(`${target} not reached in ${max} presses of ${key}`);
  };

  it('unified: the removed line is a comment button named by its old number', async () => {
    await openRun();
    const removed = page.getByRole('button', { name: 'Comment on src/app.js line 2 (removed)', exact: true });
    expect(await removed.count()).toBe(1);
    expect(await removed.locator('.line-num1').textContent()).toBe('2');
    // The line after it on the new side is line 2 too: its own button, not the removed one.
    expect(
      await page.getByRole('button', { name: 'Comment on src/app.js line 2', exact: true }).count(),
    ).toBe(1);
  });

  it('split: a removed line (left) and an added one (right) commented; rows stay beside their twins; the model gets the old number and the hunk', async () => {
    await openRun();
    await page.getByRole('button', { name: 'Unified / split' }).click();
    await page.locator('.d2h-file-side-diff').first().waitFor();
    await page.locator('.d2h-file-side-diff td.commentable').first().waitFor();
    const removed = page.getByRole('button', { name: 'Comment on src/app.js line 2 (removed)', exact: true });
    // On the left side: the old file's line 2, which the change removed.
    expect(
      await removed.evaluate(
        (td) => td.closest('.d2h-file-side-diff') === td.closest('.d2h-files-diff')?.firstElementChild,
      ),
    ).toBe(true);
    await removed.click();
    const box = page.getByLabel('Your comment on src/app.js line 2 (removed)', { exact: true });
    await box.fill('SPLIT-OLD: why drop b?');
    // The box open on the left: the right side's lines stay level with their left twins.
    const level = () =>
      page.evaluate(() => {
        const doc = (globalThis as any).document;
        const sides = doc.querySelectorAll('.d2h-file-wrapper')[0].querySelectorAll('.d2h-file-side-diff');
        const lastRow = (s: any) => [...s.querySelectorAll('tbody tr')].at(-1).getBoundingClientRect().top;
        return Math.abs(lastRow(sides[0]) - lastRow(sides[1]));
      });
    expect(await level()).toBeLessThan(2);
    await page.keyboard.press('Control+Enter');
    await page.getByRole('button', { name: 'Comment on src/big.js line 7', exact: true }).click();
    await page.getByLabel('Your comment on src/big.js line 7', { exact: true }).fill('SPLIT-NEW: seven');
    await page.getByRole('button', { name: 'Add comment' }).click();
    const pending = page.locator('#pending-comments li label');
    await expect.poll(() => pending.allTextContents()).toEqual(['src/app.js:-2 (removed)', 'src/big.js:7']);
    // Each shown under its line, on its own side, the other side level.
    const shown = page.locator('tr.review-comment');
    expect(await shown.count()).toBe(2);
    expect(await shown.first().textContent()).toContain('SPLIT-OLD');
    expect(await level()).toBeLessThan(2);

    p.server.setRules([
      {
        when: { lastUserText: '<!-- agentbox: revision 2 (agentbox revise) -->' },
        // Slow enough for the page to be seen following the revision live.
        reply: { ...bash("printf 'export const b = 2;\\n' >> src/app.js"), delayMs: 1500 },
      },
      { when: { anyText: 'SPLIT-OLD' }, reply: text('b is back.') },
    ]);
    const said = await requestChanges(page, p, name, /^Request changes \(2 comments\)$/);
    expect(said).toContain(
      '### 1. src/app.js:-2 (line 2 before your change: a line it removed)\n\nSPLIT-OLD: why drop b?',
    );
    expect(said).toContain('-export const b = 2;  ←');
    expect(said).toContain('### 2. src/big.js:7\n\nSPLIT-NEW: seven');
    expect(said).toContain('+export const v7 = 1;  ←');
    expect(p.read(name, 'revisions/2/review.json')).toContain('"side": "old"');
  }, 180_000);

  it('a 400-line diff by the keyboard: its lines one Tab stop; Merge and Request changes a few Tabs away; line 250 commented by keys alone', async () => {
    await page.goto(`${ui.url}/#/`);
    await openRun();
    if ((await page.locator('.d2h-file-side-diff').count()) > 0) {
      await page.getByRole('button', { name: 'Unified / split' }).click();
      await page.locator('.d2h-file-side-diff').first().waitFor({ state: 'detached' });
      await page.locator('td.commentable').first().waitFor();
    }
    const buttons = page.locator('td.commentable');
    // The diff is drawn after the page: counted once it is all there (CI under load counted 0).
    await expect.poll(() => buttons.count(), { timeout: 30_000 }).toBeGreaterThan(BIG_LINES);
    // From the top of the page: Merge, then through the whole diff to Request changes.
    // NOTE: blur() leaves Chromium's Tab starting point where the focus was: start from the first link.
    await page.locator('header a.brand').focus();
    const toMerge = 1 + (await pressUntil('Tab', 'Merge'));
    const toRequest = await pressUntil('Tab', 'Request changes');
    // From the first line of the diff back to Merge, and Skip the diff forward.
    await page.getByRole('button', { name: 'Comment on src/app.js line 1', exact: true }).focus();
    const back = await pressUntil('Shift+Tab', 'Merge');
    await page.getByRole('button', { name: 'Skip the diff' }).focus();
    await page.keyboard.press('Enter');
    const skipped = await focused();
    console.log(
      `Tabs: page top → Merge ${toMerge}, Merge → Request changes ${toRequest}; Shift+Tab diff → Merge ${back}; Skip the diff → #${skipped.id}`,
    );
    expect(toMerge).toBeLessThanOrEqual(8);
    expect(toRequest).toBeLessThanOrEqual(15);
    expect(back).toBeLessThanOrEqual(8);
    expect(skipped.id).toBe('review-message');

    // Into src/big.js's lines by Tab: one stop, its first line; then the keys.
    await page.getByRole('region', { name: 'changes to src/big.js' }).focus();
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ tag: 'TD', name: 'Comment on src/big.js line 1', outline: true });
    for (let i = 0; i < 12; i++) await page.keyboard.press('PageDown');
    for (let i = 0; i < 9; i++) await page.keyboard.press('ArrowDown');
    expect(await focused()).toMatchObject({
      tag: 'TD',
      name: 'Comment on src/big.js line 250',
      outline: true,
    });
    await page.keyboard.press('End');
    expect((await focused()).name).toBe(`Comment on src/big.js line ${BIG_LINES}`);
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowUp');
    expect((await focused()).name).toBe('Comment on src/big.js line 1');
    for (let i = 0; i < 249; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.keyboard.type('KEYS-ONLY: line 250');
    await page.keyboard.press('Control+Enter');
    await page.locator('#pending-comments li', { hasText: 'src/big.js:250' }).waitFor();
    // Back on its line, and Tab leaves the box's lines at once: the next stop is not a line.
    expect((await focused()).name).toBe('Comment on src/big.js line 250');
    await page.keyboard.press('Tab');
    expect((await focused()).tag).not.toBe('TD');
    // Shift+Tab returns to the line last reached, not the first.
    await page.keyboard.press('Shift+Tab');
    expect((await focused()).name).toBe('Comment on src/big.js line 250');
  }, 60_000);

  it('a revision from elsewhere: a pending comment is marked outdated, never placed or sent, a stale review is refused (409, logged); files named with ` → ` and U+202E are commented by their own paths', async () => {
    await openRun();
    if ((await page.locator('.d2h-file-side-diff').count()) > 0) {
      await page.getByRole('button', { name: 'Unified / split' }).click();
      await page.locator('.d2h-file-side-diff').first().waitFor({ state: 'detached' });
    }
    // (the keyboard test's comment on line 250 left pending: removed)
    await page
      .getByRole('button', { name: 'Remove the comment on src/big.js line 250', exact: true })
      .click();
    await page.locator('#pending-none').waitFor();
    await page.getByRole('button', { name: 'Comment on src/big.js line 9', exact: true }).click();
    await page.getByLabel('Your comment on src/big.js line 9', { exact: true }).fill('OUTDATED-NOTE');
    await page.keyboard.press('Control+Enter');
    // A reload keeps the pending comment and the typed message (it lost them).
    await page.locator('#review-message').fill('KEPT-ACROSS-RELOAD');
    await page.reload();
    await page.locator('td.commentable').first().waitFor();
    await expect
      .poll(() => page.locator('#pending-comments li label').allTextContents())
      .toEqual(['src/big.js:9']);
    expect(await page.locator('#review-message').inputValue()).toBe('KEPT-ACROSS-RELOAD');
    const drawn = createHash('sha256')
      .update(fs.readFileSync(path.join(p.runDir(name), 'changes.patch')))
      .digest('hex');
    // Revision 3, from the command line: two files whose names a drawn diff shows otherwise.
    p.server.setRules([
      {
        when: { lastUserText: '<!-- agentbox: revision 3 (agentbox revise) -->' },
        reply: bash(
          `printf 'one\\ntwo\\n' > 'a → f.txt' && printf 'x\\n' > "$(printf 'ev\\342\\200\\256lit.txt')"`,
        ),
      },
      { when: { anyText: 'REV3-FILES' }, reply: text('Two files.') },
    ]);
    // The person types the overall message meanwhile: the page is not redrawn under their typing,
    // and is once they leave the box (it stayed on the old patch for good).
    await page.locator('#review-message').fill('TYPING meanwhile');
    expect((await p.agentbox(['revise', name, 'REV3-FILES add two files'])).code).toBe(0);
    const arrow = page.getByRole('button', { name: 'Comment on a → f.txt line 1', exact: true });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await arrow.count()).toBe(0);
    await page.keyboard.press('Tab');
    await arrow.waitFor({ timeout: 30_000 });
    // The comment written on revision 2 is shown apart, under no line of revision 3.
    await expect
      .poll(() => page.locator('#pending-comments li label').allTextContents())
      .toEqual(['src/big.js:9 — written on an earlier version of the change: remove it and comment again']);
    expect(await page.locator('tr.review-comment').count()).toBe(0);
    const before = p.server.requests.length;
    await page.getByRole('button', { name: /^Request changes \(1 comment\)$/ }).click();
    await expect
      .poll(() => page.locator('#review-error').textContent())
      .toContain('A comment was written on an earlier version of the change (src/big.js:9)');
    // The API too: a review written on the patch revision 2 left is refused and logged.
    const login = await logInRaw(ui);
    const stale = await request(ui.port, `/api/runs/${name.slice(-6)}/revise`, {
      method: 'POST',
      headers: {
        cookie: login.cookie,
        origin: ui.url,
        'x-agentbox-csrf': login.key,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ message: 'STALE review', patch_sha256: drawn }),
    });
    expect(stale.status, stale.text).toBe(409);
    expect(stale.json().error).toContain('is not the one this review was written on');
    expect(p.events(name).at(-1)).toMatchObject({ event: 'revise_refused', by: 'ui' });
    expect(p.server.requests.length).toBe(before);
    expect(p.state(name)).toMatchObject({ status: 'REVIEW', revision: { number: 3 } });

    await page.getByRole('button', { name: 'Remove the comment on src/big.js line 9', exact: true }).click();
    await page.locator('#review-error button[data-action="dismiss-error"]').click();
    await arrow.click();
    await page.getByLabel('Your comment on a → f.txt line 1', { exact: true }).fill('ARROW-NAME');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('button', { name: 'Comment on ev⟨U+202E⟩lit.txt line 1', exact: true }).click();
    await page.getByLabel('Your comment on ev⟨U+202E⟩lit.txt line 1', { exact: true }).fill('BIDI-NAME');
    await page.keyboard.press('Control+Enter');
    p.server.setRules([
      { when: { lastUserText: '<!-- agentbox: revision 4 (agentbox revise) -->' }, reply: text('Noted.') },
    ]);
    await page.getByRole('button', { name: /^Request changes \(2 comments\)$/ }).click();
    await expect.poll(() => p.state(name).revision?.number, { timeout: 30_000 }).toBe(4);
    await expect.poll(() => p.state(name).status, { timeout: 120_000 }).toBe('REVIEW');
    const review = JSON.parse(p.read(name, 'revisions/4/review.json'));
    expect(review.comments.map((c: { file: string }) => c.file)).toEqual(['a → f.txt', 'ev\u202elit.txt']);
  }, 240_000);

  it('no process is left behind', async () => {
    await browser.close();
    expect(await ui.stop()).toBe(130);
    await expectNoProcessesLeft(p.tag);
  });
});
