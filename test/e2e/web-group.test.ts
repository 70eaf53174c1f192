import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeLightAndDark } from '../helpers/axe.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { attemptRules, GROUP_FILES, groupOfTask, readGroupFiles } from '../helpers/group.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';
import { CHROMIUM, launchChromium, logIn, logInRaw, request, startUi, type Ui } from '../helpers/ui.js';

/** Where the screenshot goes (git-ignored), as test/e2e/web-ui.test.ts's. */
const SHOTS = path.join(REPO_ROOT, 'test-output', 'screenshots');

const TASK = 'TASK-GROUP-WEB set x';

/**
 * Issue 31, the web UI: the new-run form starts a group (Attempts 2); its page shows the attempts
 * side by side (verdicts, cost, diffs, in the ranking's order) while they run and after; the one the
 * person picks is merged through the page and the other set aside; the runs list shows the group as
 * one row; every refusal of the group API is logged. One project, one real group (`fix --attempts
 * 2 --detach`, started by the page) against the real Claude Code and the scripted model: attempt 1
 * fails runs.verify, attempt 2 passes.
 */
describe('a group in the page', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let page: Page;
  let group = { name: '', id: '' };
  const a = (file: string) => fs.readFileSync(path.join(p.repo.dir, file), 'utf8');
  const bearer = () => ({ authorization: `Bearer ${ui.token}`, 'content-type': 'application/json' });
  const api = (pathname: string, body?: unknown, headers: Record<string, string> = bearer()) =>
    request(ui.port, pathname, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    p = await project({ files: GROUP_FILES });
    p.server.setRules(attemptRules(TASK, ['fail', 'pass']));
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await logIn(page, ui);
  }, 60_000);
  afterAll(async () => {
    if (group.name && readGroupFiles(p.repo.dir, group.name).state.status === 'ACTIVE')
      await p.agentbox(['stop', group.id]);
    await browser?.close();
    await ui?.stop();
    await p?.cleanup();
  });

  it('the new-run form: Attempts 2 shows the group fields, and Start starts a group and opens its page', async () => {
    await page.goto(`${ui.url}/#/new`);
    await page.locator('#new-run').waitFor();
    expect(await page.locator('#group-fields').isVisible()).toBe(false);
    await page.getByLabel('Attempts').fill('2');
    expect(await page.locator('#group-fields').isVisible()).toBe(true);
    const found = await axeLightAndDark(page);
    expect(found, found.join('\n')).toEqual([]);
    await page.getByLabel('Task').fill(TASK);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/#\/group\/[0-9a-f]{6}$/, { timeout: 30_000 });
    group = { name: groupOfTask(p.repo.dir, TASK), id: page.url().slice(-6) };
    expect(group.name.endsWith(group.id)).toBe(true);
    expect(readGroupFiles(p.repo.dir, group.name).meta).toMatchObject({ attempts: 2, task: TASK });
    // Drawn while it runs, then in place as the attempts end: both cards, the group's status last.
    await page.locator('article.attempt').nth(1).waitFor({ timeout: 30_000 });
    await page.locator('#summary [data-status="REVIEW"]').waitFor({ timeout: 240_000 });
    await waitFor(() => readGroupFiles(p.repo.dir, group.name).state.status === 'ENDED', 'the group to end', {
      timeoutMs: 60_000,
    });
  }, 300_000);

  const attempts = () =>
    JSON.parse(fs.readFileSync(path.join(p.repo.dir, '.agents', 'groups', group.name, 'state.json'), 'utf8'))
      .members as { attempt: number; run: string }[];
  const runOf = (k: number) => attempts().find((m) => m.attempt === k)!.run;

  it('the group page: the attempts side by side, best first, each with its verdicts, cost and diff; axe-clean light and dark', async () => {
    await page.goto(`${ui.url}/#/group/${group.id}`);
    const cards = page.locator('article.attempt');
    await expect.poll(() => cards.count()).toBe(2);
    expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-attempt')))).toEqual([
      '2',
      '1',
    ]);
    const best = cards.nth(0);
    await best.locator('.d2h-ins', { hasText: 'x = 42' }).first().waitFor();
    await cards.nth(1).locator('.d2h-ins', { hasText: 'x = 2;' }).first().waitFor();
    expect(await best.locator('[data-fact="verify"]').textContent()).toBe('✓ passed');
    expect(await cards.nth(1).locator('[data-fact="verify"]').textContent()).toBe('✗ failed');
    expect(await best.locator('[data-fact="diff"]').textContent()).toBe('1 file +1 −1');
    expect(await best.locator('[data-fact="cost"]').textContent()).toMatch(/^\$\d/);
    expect(await page.locator('#ranking').textContent()).toMatch(/^Ranked: 1st: attempt 2 — /);
    expect(await best.locator('.reason').textContent()).toMatch(/^passed runs\.verify; /);
    // Side by side at 1280 px: the two cards share a row.
    const [one, two] = await cards.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().top));
    expect(one).toBe(two);
    // Only an attempt in REVIEW is offered, as merge <group> --attempt k takes only those.
    expect(await page.getByRole('button', { name: /^Merge this attempt/ }).count()).toBe(1);
    const found = await axeLightAndDark(page);
    expect(found, found.join('\n')).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'group-1280.png'), fullPage: true });
    // Why attempt 1 did not pass: the verification's output after its first line (no dangling colon).
    const why = (await cards.nth(1).locator('.warn-text').textContent()) ?? '';
    expect(why).toContain('runs.verify FAILED: `sh test.sh` failed (exit code 1): x is not 42');
    expect(why).not.toMatch(/:(;|$)/);
    // The group's cost as its attempts' (was $0.00 beside attempts of $0.0013).
    const label = (await page.locator('#group-label').textContent()) ?? '';
    expect(label).toMatch(/^· fix ×2 · 1 passed · 1 failed · \$\d+\.\d{2,4} · started /);
    expect(label).not.toContain('$0.00 ');

    // As narrow as a phone, the cards' diffs scroll sideways: each scrolling box is a Tab stop
    // with a name, and the arrow keys scroll it.
    await page.setViewportSize({ width: 390, height: 900 });
    try {
      const narrow = await axeLightAndDark(page);
      expect(narrow, narrow.join('\n')).toEqual([]);
      const box = best.locator('.d2h-file-diff');
      expect(await box.getAttribute('tabindex')).toBe('0');
      expect(await box.getAttribute('aria-label')).toBe('attempt 2: changes to src/app.ts');
      expect(await box.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      await page.evaluate('document.activeElement?.blur()');
      for (let i = 0; i < 60 && !(await box.evaluate((el) => el === el.ownerDocument.activeElement)); i++)
        await page.keyboard.press('Tab');
      expect(await box.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
      expect(await box.evaluate((el) => (globalThis as any).getComputedStyle(el).outlineStyle)).not.toBe(
        'none',
      );
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => box.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('the runs list: one row for the group, linking to its page; its attempts are not rows of their own', async () => {
    await page.goto(`${ui.url}/#/`);
    const row = page.locator(`tr[data-group="${group.name}"]`);
    await row.waitFor();
    expect(await row.locator('.group-label').textContent()).toMatch(
      /^fix ×2 · 1 passed · 1 failed · \$\d+\.\d{2,4}$/,
    );
    for (const k of [1, 2]) expect(await page.locator(`tr[data-run="${runOf(k)}"]`).count()).toBe(0);
    await row.click();
    await page.waitForURL(new RegExp(`#/group/${group.id}$`));
    // An attempt's own page leads back to its group.
    await page.getByRole('link', { name: `Open run ${runOf(1).slice(-6)}` }).click();
    await page.locator('#group-of', { hasText: 'attempt 1 of 2 in its group' }).click();
    await page.waitForURL(new RegExp(`#/group/${group.id}$`));
  });

  it('the merge API refuses without the token, from a foreign Host, without CSRF, a bad attempt: each logged, nothing merged', async () => {
    const url = `/api/groups/${group.id}/merge`;
    const body = JSON.stringify({ attempt: 2, commit: true });
    const { cookie: session, key: csrf } = await logInRaw(ui);
    const cases: [string, number, Record<string, string>][] = [
      ['no token', 401, { 'content-type': 'application/json' }],
      ['a wrong token', 401, { authorization: `Bearer ${ui.token}x` }],
      ['the token in the query', 401, {}],
      ['a foreign Host', 403, { ...bearer(), host: `evil.example:${ui.port}` }],
      ['no port in Host', 403, { ...bearer(), host: '127.0.0.1' }],
      ['the cookie, no CSRF', 403, { cookie: session, origin: ui.url }],
      ['the cookie, a wrong CSRF', 403, { cookie: session, origin: ui.url, 'x-agentbox-csrf': `${csrf}x` }],
      ['the cookie, no Origin', 403, { cookie: session, 'x-agentbox-csrf': csrf }],
      ['a foreign Origin', 403, { cookie: session, origin: 'http://evil.example', 'x-agentbox-csrf': csrf }],
      [
        'cross-site',
        403,
        { cookie: session, origin: ui.url, 'x-agentbox-csrf': csrf, 'sec-fetch-site': 'cross-site' },
      ],
    ];
    for (const [why, status, headers] of cases) {
      const r = await request(ui.port, why === 'the token in the query' ? `${url}?token=${ui.token}` : url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      expect(r.status, why).toBe(status);
    }
    for (const attempt of [0, 3, '2', '../2', 1.5, null]) {
      const r = await api(url, { attempt });
      expect(r.status, JSON.stringify(attempt)).toBe(400);
      expect(r.json().error).toContain('"attempt" must be a whole number from 1 to 2');
    }
    expect((await api('/api/groups/zzzzzz/merge', { attempt: 1 })).status).toBe(404);
    expect((await api(`/api/groups/${group.id}/attempts/9/diff`)).status).toBe(404);
    expect(a('src/app.ts')).toBe('export const x = 1;\n');
    const logged = fs
      .readFileSync(path.join(p.repo.dir, '.agents', 'ui', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.path === url);
    // Each refusal once (the same one again within a minute is counted, not written: refusal-log.ts).
    expect(new Set(logged.map((e) => `${e.status} ${e.reason}`))).toEqual(
      new Set([
        '401 missing or wrong token',
        `403 Host evil.example:${ui.port} is not this server`,
        '403 Host 127.0.0.1 is not this server',
        '403 missing or wrong x-agentbox-csrf header',
        '403 no Origin header',
        '403 Origin http://evil.example is not this server',
        '403 a cross-site request',
        ...[0, 3, '"2"', '"../2"', 1.5, null].map(
          (v) => `400 "attempt" must be a whole number from 1 to 2, not ${v}`,
        ),
      ]),
    );
    expect(logged.every((e) => e.event === 'ui_refused' && e.method === 'POST')).toBe(true);
  });

  it('"Merge this attempt" on the picked one: the main tree has its change, the other attempt is set aside, every patch kept; once', async () => {
    await page.goto(`${ui.url}/#/group/${group.id}`);
    const card = page.locator('article.attempt[data-attempt="2"]');
    await card.locator('.d2h-ins').first().waitFor();
    const sent: { key?: string; body?: string } = {};
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/merge'))
        Object.assign(sent, { key: r.headers()['idempotency-key'], body: r.postData() ?? '' });
    });
    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: 'Merge this attempt' }).click();
    await page.locator('#toast', { hasText: 'merged attempt 2' }).waitFor();
    expect(a('src/app.ts')).toBe('export const x = 42;\n');
    expect(p.state(runOf(2)).status).toBe('MERGED');
    const other = p.state(runOf(1));
    expect(other.status).toBe('DISCARDED');
    expect(fs.existsSync(other.worktree_path)).toBe(false);
    const groupDir = path.join(p.repo.dir, '.agents', 'groups', group.name);
    expect(JSON.parse(fs.readFileSync(path.join(groupDir, 'state.json'), 'utf8'))).toMatchObject({
      status: 'MERGED',
      merged: { attempt: 2, run: runOf(2) },
    });
    for (const k of [1, 2])
      expect(fs.readFileSync(path.join(groupDir, 'patches', `agent_${k}.patch`), 'utf8')).toContain(
        k === 2 ? '+export const x = 42;' : '+export const x = 2;',
      );
    await page.locator('#merged').waitFor();
    expect(await page.getByRole('button', { name: /^Merge this attempt/ }).count()).toBe(0);
    // The page's request again (a retry after a lost answer): the same answer, nothing merged twice.
    expect(sent.key).toMatch(/^[0-9a-f]{32}$/);
    // It names the patch it drew, as the run page does: one revised since is refused, not merged unseen.
    const drawn = fs.readFileSync(
      path.join(p.repo.dir, '.agents', 'groups', group.name, 'patches', 'agent_2.patch'),
    );
    expect(JSON.parse(sent.body!).patch_sha256).toBe(createHash('sha256').update(drawn).digest('hex'));
    const again = await api(`/api/groups/${group.id}/merge`, JSON.parse(sent.body!), {
      ...bearer(),
      'idempotency-key': sent.key!,
    });
    expect(again.status, again.text).toBe(200);
    expect(again.json()).toMatchObject({ attempt: 2, run: runOf(2) });
    // Without the key, the gate itself refuses a second merge, and says why.
    const twice = await api(`/api/groups/${group.id}/merge`, { attempt: 1, force: true });
    expect(twice.status).toBe(409);
    expect(twice.json().error).toContain(`is already merged (attempt 2, run ${runOf(2)})`);
    expect(a('src/app.ts')).toBe('export const x = 42;\n');
  }, 60_000);

  it('no process is left behind', async () => {
    await browser.close();
    expect(await ui.stop()).toBe(130);
    await expectNoProcessesLeft(p.tag);
  });
});
