import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { startUiServer } from '../../src/web/server.js';
import { bash, text } from '../fixtures/model-server/index.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { prepareInteractiveConfig, TEST_API_KEY } from '../helpers/claude.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty, waitFor } from '../helpers/pty.js';
import { CHROMIUM, launchChromium, startUi, type Ui } from '../helpers/ui.js';

/** Where the screenshots go (git-ignored): the README's two are copies of these. */
const SHOTS = path.join(REPO_ROOT, 'test-output', 'screenshots');

/**
 * Issue 15 in a real browser: the whole loop from the page alone (the seed's web self-development
 * test: create a fix run from the form, watch it reach REVIEW live, open the diff, press merge, see
 * the change in the working tree), an agent's HTML rendered inert, a server killed and restarted
 * under an open page, the keyboard, notifications, and screenshots at 1280 and 390 px.
 */
describe('agentbox ui in Chromium', () => {
  let p: Project;
  let ui: Ui;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('no Chromium: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH');
    fs.mkdirSync(SHOTS, { recursive: true });
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    ui = await startUi(p.repo.dir, p.env);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: ui.url });
    // Records what the page asks the browser to show (headless Chromium shows nothing).
    await context.addInitScript(() => {
      const shown: string[] = [];
      (globalThis as any).shownNotifications = shown;
      (globalThis as any).Notification = class {
        static permission = 'granted';
        static requestPermission = async () => 'granted';
        constructor(title: string, options: { body?: string }) {
          shown.push(`${title}: ${options?.body ?? ''}`);
        }
      };
    });
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
  });

  const shoot = async (name: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  };

  /** What has the keyboard focus: its tag, the run its row shows, and its text if it is a button. */
  interface Stop {
    readonly tag: string;
    readonly run: string | null;
    readonly text: string | null;
  }
  const focused = (): Promise<Stop> =>
    page.evaluate(() => {
      const el = (globalThis as any).document.activeElement; // the page's DOM: this Node project has no DOM types
      return {
        tag: el?.tagName ?? '',
        run: el?.getAttribute('data-run') ?? null,
        text: el?.tagName === 'BUTTON' ? (el.textContent ?? '') : null,
      };
    });

  /** Presses Tab from the top of the page until the focus leaves the page; returns each stop. */
  const tabStops = async (max = 80): Promise<Stop[]> => {
    await page.evaluate('document.activeElement?.blur()');
    const stops: Stop[] = [];
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const stop = await focused();
      if (stop.tag === 'BODY' || stop.tag === '') break;
      stops.push(stop);
    }
    return stops;
  };

  /** Presses Tab from the top of the page until the focused element matches. */
  const tabUntil = async (match: (s: Stop) => boolean, max = 80): Promise<void> => {
    await page.evaluate('document.activeElement?.blur()');
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if (match(await focused())) return;
    }
    throw new Error(`no Tab stop matched within ${max} presses`);
  };

  it('logs in with the printed address and lands on the clean URL', async () => {
    await page.goto(ui.loginUrl);
    expect(page.url()).toBe(`${ui.url}/`);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    expect(await page.getByText('No runs yet').count()).toBe(1);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === `agentbox_session_${ui.port}`)).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
  });

  it("two servers' logins in one browser keep each their own; a browser with the cookie but not the page's key is told to log in", async () => {
    // Another repository's `agentbox ui` (another port): its login must not log this page out.
    const fresh = () => randomBytes(24).toString('base64url');
    const second = await startUiServer({
      root: p.repo.dir,
      ledger: openLedger(p.repo.dir),
      env: p.env,
      secrets: { token: fresh(), session: fresh(), csrf: fresh() },
    });
    try {
      const other = await context.newPage();
      await other.goto(second.loginUrl);
      await other.getByRole('heading', { name: 'Runs' }).waitFor();
      await other.close();
      await page.reload();
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
    } finally {
      await second.close();
    }
    await page.evaluate(() => (globalThis as any).localStorage.removeItem('agentbox.key'));
    await page.reload();
    await page.getByText('This browser has no login for this page').waitFor();
    await page.goto(ui.loginUrl);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  it('web-only self-development: a fix asked for, watched live, reviewed and merged from the browser', async () => {
    const task = 'TASK-WEB make app return 9';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: { ...bash("printf 'module.exports = 9;\\n' > src/app.js"), delayMs: 800 },
      },
      { when: { anyText: task }, reply: text('app.js now returns **9**.') },
    ]);
    await page.getByRole('link', { name: 'New run' }).click();
    await page.getByLabel('Type').selectOption('fix');
    await page.getByLabel('Task').fill(task);
    await shoot('new-run');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/#\/run\/[0-9a-f]{6}$/);
    const id = page.url().slice(-6);
    // Live: the page is never reloaded, the badge changes as the run goes (SSE).
    await page.evaluate(() => {
      (globalThis as any).sameDocument = true;
    });
    await page.locator('[data-status="REVIEW"]').waitFor({ timeout: 90_000 });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);
    await page.locator('.d2h-file-wrapper', { hasText: 'src/app.js' }).waitFor();
    expect(await page.locator('.d2h-ins', { hasText: 'module.exports = 9;' }).count()).toBeGreaterThan(0);
    expect(await page.locator('#report strong', { hasText: /^9$/ }).count()).toBe(1);
    await shoot('run-review');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Merge' }).click();
    await page.locator('[data-status="MERGED"]').waitFor();
    expect(asked).toContain('Apply the changes of');
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 9;\n');
    expect(p.repo.git('log', '-1', '--format=%s').trim()).toBe(task);
    expect(p.state(p.runs().find((n) => n.endsWith(id))!).status).toBe('MERGED');
    // The run ended while the page was open: a notification was asked for.
    expect(await page.evaluate(() => (globalThis as any).shownNotifications)).toContainEqual(
      `agentbox: REVIEW: ${task}`,
    );
  }, 120_000);

  it("an agent's <script>, onerror and javascript: links render inert", async () => {
    const task = 'TASK-WEB-XSS';
    p.server.setRules([
      {
        when: { anyText: task },
        reply: text(
          'Report.\n\n<script>window.pwned=1</script>\n\n<img src=x onerror="window.pwned=2">\n\n[link](javascript:window.pwned=3)\n\n**safe**',
        ),
      },
    ]);
    const r = await p.agentbox(['scout', task, '--json']);
    const id = (JSON.parse(r.stdout).run as string).slice(-6);
    await page.goto(`${ui.url}/#/run/${id}`);
    await page.locator('#report strong', { hasText: 'safe' }).waitFor();
    await page
      .locator('#report a')
      .click({ trial: false })
      .catch(() => {});
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await page.locator('#report script, #report img[onerror]').count()).toBe(0);
    expect(await page.locator('#report a[href^="javascript"]').count()).toBe(0);
  }, 120_000);

  it('a run fetched from another machine says where it ran, as text', async () => {
    const file = path.join(p.runDir(p.newest()), 'state.json');
    const before = fs.readFileSync(file, 'utf8');
    const state = JSON.parse(before);
    state.summary = { ...state.summary, ran_on: 'ci-runner-3 <b>x</b>' };
    fs.writeFileSync(file, JSON.stringify(state));
    try {
      await page.goto(`${ui.url}/#/`);
      const origin = page.locator(`tr[data-run="${p.newest()}"] .origin`);
      await origin.waitFor();
      expect(await origin.textContent()).toBe('ran on ci-runner-3 <b>x</b>');
      expect(await page.locator('tbody b').count()).toBe(0);
    } finally {
      fs.writeFileSync(file, before);
    }
  });

  it('a run that did not pass: a banner above the patch, and its merge button and confirmation say so', async () => {
    const task = 'TASK-WEB-GATE make app return 5';
    const config = path.join(p.repo.dir, 'agentbox.yaml');
    const before = fs.readFileSync(config, 'utf8');
    fs.writeFileSync(config, 'runs:\n  verify: "echo CHECK-FAILED; exit 1"\n');
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash("printf 'module.exports = 5;\\n' > src/app.js") },
      { when: { anyText: task }, reply: text('Done; all checks pass.') },
    ]);
    try {
      expect((await p.agentbox(['fix', task])).code).toBe(1);
    } finally {
      fs.writeFileSync(config, before);
    }
    const name = p.newest();
    expect(p.state(name).status).toBe('ABORTED');
    await page.goto(ui.loginUrl);
    await page.goto(`${ui.url}/#/run/${name.slice(-6)}`);
    const banner = page.locator('#not-passing');
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/did not pass.*it ended ABORTED.*runs\.verify FAILED/);
    // Above the patch.
    expect(await page.locator('#not-passing ~ #diff, #not-passing ~ h2').count()).toBeGreaterThan(0);
    await shoot('run-not-passing');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await page.getByRole('button', { name: 'Merge (ABORTED)' }).click();
    await page.waitForTimeout(300);
    expect(asked).toMatch(/^This run did not pass: it ended ABORTED/);
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).not.toContain('5');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Merge (ABORTED)' }).click();
    await page.locator('[data-status="MERGED"]').waitFor();
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 5;\n');
  }, 120_000);

  it('the keyboard reaches every run and its buttons', async () => {
    // A fix run in REVIEW: its page carries the most buttons (Merge, Discard, Unified / split).
    const task = 'TASK-WEB-KEYS make app return 7';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash("printf 'module.exports = 7;\\n' > src/app.js") },
      { when: { anyText: task }, reply: text('app.js returns 7.') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');

    await page.goto(`${ui.url}/#/`);
    await page.locator(`tr[data-run="${name}"]`).waitFor();
    await shoot('runs');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(13, 17, 23)');
    await shoot('runs-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(255, 255, 255)');

    // Every run's row is a Tab stop; Enter on one opens its page.
    const rows = await page
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
    expect(rows).toContain(name);
    const listStops = await tabStops();
    expect(new Set(listStops.map((s) => s.run).filter(Boolean))).toEqual(new Set(rows));
    await tabUntil((s) => s.run === name && s.tag === 'TR');
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`#/run/${name.slice(-6)}$`));
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.locator('.d2h-file-wrapper').first().waitFor();
    await shoot('run-detail');

    // Every button of the run page is a Tab stop, and the keyboard operates them.
    // The buttons a person meets (a line's comment button, a <td>, is counted below).
    const buttons = await page
      .getByRole('button')
      .evaluateAll((els) => els.filter((e) => e.tagName === 'BUTTON').map((e) => e.textContent ?? ''));
    expect(buttons).toEqual(
      expect.arrayContaining(['Merge', 'Discard', 'Unified / split', 'Request changes', 'Send follow-up']),
    );
    const pageStops = await tabStops();
    expect(new Set(pageStops.filter((s) => s.tag === 'BUTTON').map((s) => s.text))).toEqual(new Set(buttons));
    // Each line of the change a comment button too (issue 39: the review): one Tab stop per file
    // for all its lines (the arrow keys move among them, test/e2e/web-review-lines.test.ts).
    const lines = await page.locator('td.commentable[role="button"]').count();
    expect(lines).toBeGreaterThan(0);
    const files = await page.locator('.d2h-file-diff:has(td.commentable)').count();
    expect(pageStops.filter((s) => s.tag === 'TD').length).toBe(files);
    expect(await page.locator('.d2h-file-side-diff').count()).toBe(0);
    await tabUntil((s) => s.text === 'Unified / split');
    await page.keyboard.press('Enter');
    await page.locator('.d2h-file-side-diff').first().waitFor();
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await tabUntil((s) => s.text === 'Discard');
    await page.keyboard.press('Space');
    await page.locator('[data-status="DISCARDED"]').waitFor();
    expect(asked).toContain(`Remove the worktree and branch of ${name}?`);
    expect(p.state(name).status).toBe('DISCARDED');

    // Re-run, by the keyboard too: the same task as a new run (issue 39), confirmed; the page goes
    // to the new run, which says whose rerun it is, and the old run stays DISCARDED.
    const before = fs.readFileSync(path.join(p.runDir(name), 'state.json'), 'utf8');
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await tabUntil((s) => s.text === 'Re-run');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => !url.hash.endsWith(name.slice(-6)));
    expect(asked).toBe(
      `Start this fix task again as a new run, with today's templates and configuration? ${name} is left as it is.`,
    );
    const rerun = p.newest();
    expect(page.url()).toBe(`${ui.url}/#/run/${rerun.slice(-6)}`);
    await page.locator('#rerun-of').waitFor();
    expect(await page.locator('#rerun-of').textContent()).toBe(`rerun of ${name}`);
    await page.locator('[data-status="REVIEW"]').waitFor({ timeout: 60_000 });
    expect(p.read(rerun, 'meta.yaml')).toContain(`rerun_of: ${name}\n`);
    expect(p.read(rerun, 'meta.yaml')).toContain(`task: ${task}\n`);
    expect(fs.readFileSync(path.join(p.runDir(name), 'state.json'), 'utf8')).toBe(before);
    await page.locator('#rerun-of').click();
    await page.waitForURL(new RegExp(`#/run/${name.slice(-6)}$`));

    await page.goto(`${ui.url}/#/settings`);
    await page.getByLabel('Supervisor mode').waitFor();
    await shoot('settings');
  }, 120_000);

  it('the settings panel writes agentbox.yaml and a template', async () => {
    await page.goto(`${ui.url}/#/settings`);
    // rules is the default: a save writes only what changed (test/e2e/web-page-a11y.test.ts).
    await page.getByLabel('Supervisor mode').selectOption('off');
    // A command is shown, never edited here (the server refuses it: see test/e2e/web-api.test.ts).
    expect(await page.getByLabel('Verify command').getAttribute('readonly')).not.toBeNull();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    // Looser than the person's rules: saved, and said to wait for `agentbox trust`.
    await page.getByText('supervisor.mode loosens your own settings').waitFor();
    // The page shows what the save changed without a reload: the file as written, the entry awaiting trust.
    await page
      .locator('#settings-files pre', { hasText: 'mode: off # rules' })
      .waitFor({ state: 'attached' });
    await page.locator('#awaiting-trust').waitFor();
    const yaml = fs.readFileSync(path.join(p.repo.dir, 'agentbox.yaml'), 'utf8');
    expect(yaml).toMatch(/^ {2}mode: off # rules$/m);
    expect(yaml).toMatch(/^ {2}verify:$/m);
    await page.getByLabel('template file').selectOption('fix.input.md');
    expect(await page.getByLabel('template text').inputValue()).not.toBe('');
    await page.getByLabel('template text').fill('Fix it, and say what you ran.\n');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('template saved').waitFor();
    expect(fs.readFileSync(path.join(p.repo.dir, '.agentbox', 'templates', 'fix.input.md'), 'utf8')).toBe(
      'Fix it, and say what you ran.\n',
    );
    await page.getByLabel('template text').fill('Broken {{nope}}');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.locator('#templates [role="alert"]', { hasText: 'nope' }).waitFor();
    fs.rmSync(path.join(p.repo.dir, '.agentbox'), { recursive: true, force: true });
    p.repo.git('checkout', '--', 'agentbox.yaml');
  });

  it('the server killed and restarted mid-run: the run finishes, the open page reconnects and shows it', async () => {
    const task = 'TASK-WEB-RESTART';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: { ...bash('true'), delayMs: 2500 } },
      { when: { anyText: task }, reply: text('done without the UI') },
    ]);
    const r = await p.agentbox(['scout', task, '--detach', '--json']);
    const name = JSON.parse(r.stdout).run as string;
    await page.goto(`${ui.url}/#/run/${name.slice(-6)}`);
    await page.locator('[data-status="ACTIVE"]').waitFor();
    await page.locator('#live.on').waitFor();
    await page.evaluate(() => {
      (globalThis as any).sameDocument = true;
    });
    ui.child.kill('SIGKILL');
    await ui.stop();
    await page.locator('#live:not(.on)').waitFor();
    ui = await startUi(p.repo.dir, p.env);
    await page.locator('#live.on').waitFor({ timeout: 30_000 });
    await page.locator('[data-status="DONE"]').waitFor({ timeout: 90_000 });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);
    expect(await page.locator('#report').textContent()).toContain('done without the UI');
  }, 120_000);

  it('an interactive session that waits for the person: the page notifies, and shows its state', async () => {
    prepareInteractiveConfig({
      configDir: p.home.configDir,
      projectDirs: [p.repo.dir],
      apiKey: TEST_API_KEY,
    });
    p.server.setRules([{ when: { lastUserText: 'TASK-WEB-SESSION' }, reply: text('your turn now') }]);
    await page.goto(`${ui.url}/#/`);
    await page.locator('tbody tr').first().waitFor();
    const before = p.runs().length;
    const term = startPty(['start', 'TASK-WEB-SESSION'], { cwd: p.repo.dir, env: p.env });
    try {
      await waitFor(() => p.runs().length > before, 'the session run');
      const name = p.newest();
      await page.waitForFunction(
        () =>
          ((globalThis as any).shownNotifications as string[]).some((n) =>
            n.startsWith('agentbox: waits for you'),
          ),
        undefined,
        { timeout: 60_000 },
      );
      await page.goto(`${ui.url}/#/run/${name.slice(-6)}`);
      await page.locator('#session', { hasText: 'waiting for you' }).waitFor();
      expect(await page.getByRole('button', { name: 'Restart' }).count()).toBe(1);
      expect((await p.agentbox(['stop', name.slice(-6)])).code).toBe(0);
      await term.exited;
    } finally {
      term.kill();
    }
  }, 120_000);

  it('no process is left behind', async () => {
    await browser.close();
    expect(await ui.stop()).toBe(130);
    await expectNoProcessesLeft(p.tag);
  });
});
