import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE } from '../../bench/ledger-fixture.js';
import { createRun, openLedger, updateState } from '../../src/ledger/index.js';
import { axeLightAndDark } from '../helpers/axe.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { CHROMIUM, launchChromium, logIn, startUi, type Ui } from '../helpers/ui.js';

const CALLS = 600;
/** The call that took 5 minutes: a slow step. */
const SLOW = 7;
/** The calls whose output holds the needle: one on the first page, two far below it. */
const NEEDLES = [3, 250, 590];
const NEEDLE = 'Needle-XYZ';
const T0 = Date.UTC(2026, 0, 1);
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

/**
 * A finished fix run written as the ledger holds one — stream-json as Claude Code 2.1.330 writes
 * it (each line with its `timestamp`), events.jsonl as agentbox writes it: runs.setup, the prompt,
 * two turns (the supervisor sent the agent on at the first Stop), runs.verify at the second.
 */
async function writeRun(dir: string): Promise<string> {
  const ledger = openLedger(dir);
  const run = await createRun(ledger, {
    type: 'fix',
    task: 'TASK-SEARCH a long run',
    envelope: ENVELOPE,
    repoShaStart: null,
  });
  const stream: unknown[] = [];
  const events: unknown[] = [
    { ts: iso(-10), event: 'setup_started', command: 'npm ci' },
    {
      ts: iso(-5),
      event: 'setup_finished',
      command: 'npm ci',
      ok: true,
      exit_code: 0,
      timed_out: false,
      duration_ms: 5000,
      log: 'raw/setup.log',
    },
    { ts: iso(0), event: 'UserPromptSubmit', session_id: 's' },
  ];
  let t = 1;
  for (let k = 0; k < CALLS; k++) {
    const id = `toolu_${k}`;
    stream.push({
      type: 'assistant',
      timestamp: iso(t),
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: `Step ${k}: reading.` },
          { type: 'tool_use', id, name: 'Bash', input: { command: `cat src/file-${k}.ts` } },
        ],
      },
    });
    t += k === SLOW ? 300 : 1;
    const out = NEEDLES.includes(k)
      ? `line ${k}\nfound ${NEEDLE} here, and ${NEEDLE.toLowerCase()} again`
      : `line ${k}`;
    stream.push({
      type: 'user',
      timestamp: iso(t),
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: out }] },
    });
    t += 1;
    if (k === CALLS / 2)
      events.push({
        ts: iso(t++),
        event: 'Stop',
        iteration: 1,
        decision: 'continue',
        source: 'rules',
        reason: 'correction',
        text: 'add a test',
      });
  }
  events.push(
    { ts: iso(t + 2), event: 'verify', ok: true, detail: '`npm test` passed', duration_ms: 2000 },
    { ts: iso(t + 3), event: 'Stop', iteration: 2, decision: 'complete', source: 'rules', reason: 'done' },
  );
  fs.mkdirSync(path.join(run.dir, 'raw'), { recursive: true });
  fs.writeFileSync(
    path.join(run.dir, 'raw', 'stream.jsonl'),
    stream.map((l) => `${JSON.stringify(l)}\n`).join(''),
  );
  fs.appendFileSync(path.join(run.dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  await updateState(ledger, run.name, {
    status: 'REVIEW',
    tool_calls: CALLS,
    started_at: iso(-10),
    ended_at: iso(t + 4),
  });
  return run.name;
}

/**
 * Issue 40: search in a transcript far longer than one page (count, next/previous by buttons and
 * Enter / Shift+Enter, every occurrence marked, the current one in view, pages loaded down to a
 * far match), and a duration for every step (each tool call, each turn, runs.setup, runs.verify),
 * the slow ones said at a glance. No claude needed: the run is written as the ledger holds one.
 */
describe('the run page: search in the transcript, a duration for every step (Chromium)', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let page: Page;
  let id = '';

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project();
    id = (await writeRun(p.repo.dir)).slice(-6);
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await logIn(page, ui);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    await expectNoProcessesLeft(p.tag);
    await p?.cleanup();
  });

  const open = async () => {
    await page.goto(`${ui.url}/#/run/${id}`);
    await page.locator('#transcript-list > li').first().waitFor();
  };
  const count = () => page.locator('#transcript-search-count').textContent();
  /** The current match: its <mark> inside the viewport, and the call whose output it is in. */
  const current = async () => {
    const mark = page.locator('#transcript-list mark.t-hit-now').first();
    await mark.waitFor();
    const box = (await mark.boundingBox())!;
    const inView = box.y >= 0 && box.y + box.height <= 800;
    const call = await mark.evaluate((m: any) => m.closest('li').querySelector('summary')?.textContent ?? '');
    return { inView, call: /file-(\d+)/.exec(call)?.[1] };
  };

  it('search: a count, Enter and Shift+Enter, Previous and Next, each occurrence marked, pages loaded down to a far match', async () => {
    await open();
    const shown = await page.locator('#transcript-list details.t-call').count();
    expect(shown).toBeLessThan(NEEDLES[1]!);
    // By the keyboard: Tab reaches the field, its label says what it is.
    await page.evaluate('document.activeElement?.blur()');
    for (
      let i = 0;
      i < 40 && (await page.evaluate('document.activeElement?.id')) !== 'transcript-search';
      i++
    )
      await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('transcript-search');
    await page.keyboard.type('needle-xyz');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      /^1 of 3$/.test((globalThis as any).document.getElementById('transcript-search-count').textContent),
    );
    expect(await page.locator('#transcript-search-count').getAttribute('role')).toBe('status');
    expect(await current()).toEqual({ inView: true, call: '3' });
    // Every occurrence in the entry marked, any case; the call opened on it.
    const first = page.locator('#transcript-list li.t-current');
    expect(await first.locator('mark.t-hit').allTextContents()).toEqual([NEEDLE, NEEDLE.toLowerCase()]);
    expect(await first.locator('details').getAttribute('open')).not.toBeNull();

    // Enter: the next one, far below the pages drawn: loaded down to it, in view.
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === '2 of 3',
    );
    expect(await current()).toEqual({ inView: true, call: '250' });
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === '3 of 3',
    );
    expect(await current()).toEqual({ inView: true, call: '590' });
    expect(await page.locator('#transcript-list li.t-current').count()).toBe(1);
    // Past the last: back to the first. Shift+Enter: the one before.
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === '1 of 3',
    );
    await page.keyboard.press('Shift+Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === '3 of 3',
    );
    // The buttons do the same.
    await page.getByRole('button', { name: 'Previous' }).click();
    expect(await count()).toBe('2 of 3');
    expect((await current()).call).toBe('250');
    await page.getByRole('button', { name: 'Next' }).click();
    expect((await current()).call).toBe('590');
    expect(await page.locator('#transcript-list mark.t-hit').count()).toBe(6);

    // Nothing found says so; Escape clears the search and its marks.
    await page.locator('#transcript-search').fill('no such words');
    await page.locator('#transcript-search').press('Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === 'No match',
    );
    expect(await page.locator('#transcript-list mark').count()).toBe(0);
    await page.locator('#transcript-search').fill('needle-xyz');
    await page.locator('#transcript-search').press('Enter');
    await page.waitForFunction(
      () => (globalThis as any).document.getElementById('transcript-search-count').textContent === '1 of 3',
    );
    await page.locator('#transcript-search').press('Escape');
    expect(await page.locator('#transcript-list mark').count()).toBe(0);
    expect(await count()).toBe('');
  }, 90_000);

  it('a duration for every tool call, turn, runs.setup and runs.verify; the slow ones said in words', async () => {
    await open();
    const summary = (k: number) =>
      page.locator('#transcript-list details.t-call > summary', { hasText: `file-${k}.ts` });
    expect(await summary(0).textContent()).toMatch(/✓ 1\.0 s$/);
    // 300 s of a 1,515 s run: a fifth of it.
    expect(await summary(SLOW).textContent()).toMatch(/✓ 5 min 0 s · slow: 20% of the run$/);
    expect(await summary(SLOW).locator('.t-slow').count()).toBe(1);
    const steps = await page.locator('#transcript-steps > li').allTextContents();
    expect(steps).toEqual([
      'runs.setup npm ci 5.0 s',
      'turn 1 (continue) 15 min 2 s · slow: 60% of the run',
      'runs.verify 2.0 s',
      'turn 2 (complete) 10 min 2 s · slow: 40% of the run',
    ]);
    // The verification's own line in the transcript says it too.
    expect(await page.locator('#transcript-list .t-verify').textContent()).toContain(
      'verification passed 2.0 s',
    );
  }, 60_000);

  it('axe: nothing serious with the search and its marks shown, light and dark, 1280 and 390 px; the search controls show their focus', async () => {
    const found: string[] = [];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await open();
      await page.locator('#transcript-search').fill('needle-xyz');
      await page.locator('#transcript-search').press('Enter');
      await page.locator('#transcript-list mark.t-hit-now').first().waitFor();
      found.push(...(await axeLightAndDark(page)).map((v) => `${width}px: ${v}`));
      const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      if (wide > width) found.push(`${width}px: the page is ${wide} px wide`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(found, found.join('\n')).toEqual([]);
    for (const control of ['#transcript-search', '#transcript-search-prev', '#transcript-search-next']) {
      await page.locator(control).focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      const outline = await page.locator(control).evaluate((el: any) => {
        const s = (globalThis as any).getComputedStyle(el);
        return s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) >= 1;
      });
      expect(outline, control).toBe(true);
    }
  }, 90_000);
});
