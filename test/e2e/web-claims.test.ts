import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { run as cli } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { createRun, ensureLedger, openLedger, updateState } from '../../src/ledger/index.js';
import { GIT_ENV, tempDir } from '../helpers/git-repo.js';
import { waitFor } from '../helpers/pty.js';
import { type Origin, origin } from '../helpers/remote.js';
import { CHROMIUM, launchChromium, request, startUi, type Ui } from '../helpers/ui.js';
import { ENVELOPE } from '../unit/fixtures/ledger.js';

/*
 * A fetched run's page in a real browser (issue 37): what its publication claims is said above the
 * patch, by whom, and the merge button's confirmation quotes it before it sends `force`; the page
 * merges the patch it drew (its hash), and that showing is recorded.
 */
describe('a fetched run on the web page', () => {
  let world: Origin | undefined;
  let ui: Ui | undefined;
  let browser: Browser | undefined;
  const homes: string[] = [];
  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    world?.cleanup();
    for (const dir of homes) fs.rmSync(dir, { recursive: true, force: true });
  });

  const machine = (o: Origin, name: string) => {
    const repo = o.clone(name);
    ensureLedger(repo.dir);
    const home = tempDir('agentbox-home-');
    homes.push(home);
    const env = { ...GIT_ENV, PATH: process.env.PATH!, HOME: home, AGENTBOX_HOST: `${name}.example` };
    const agentbox = async (...argv: string[]) => {
      const io = memoryIo();
      const code = await cli(argv, { cwd: repo.dir, env, io });
      return { code, stdout: io.stdout, stderr: io.stderr };
    };
    return { repo, env, ledger: openLedger(repo.dir), agentbox };
  };

  it('says what it claims and by whom, and its merge confirms that first', async () => {
    if (!CHROMIUM) throw new Error('no Chromium: apt-get install -y chromium, or set CHROMIUM_PATH');
    world = origin({ 'src/app.ts': 'export const x = 1;\n' });
    const runner = machine(world, 'runner');
    const laptop = machine(world, 'laptop');
    const run = await createRun(runner.ledger, {
      type: 'fix',
      task: 'bump x',
      envelope: ENVELOPE,
      repoShaStart: runner.repo.git('rev-parse', 'HEAD').trim(),
      pid: process.pid,
      now: new Date('2026-03-01T10:00:00Z'),
    });
    runner.repo.write('src/app.ts', "export const x = 'bump x';\n");
    fs.writeFileSync(path.join(run.dir, 'changes.patch'), runner.repo.git('diff'));
    runner.repo.git('checkout', '--quiet', '--', '.');
    await updateState(runner.ledger, run, {
      status: 'REVIEW',
      output: { template: null, applied: false, violations: 0, corrections: 0, verified: true },
    });
    expect((await runner.agentbox('push', run.id)).code).toBe(0);
    expect((await laptop.agentbox('fetch')).code).toBe(0);

    ui = await startUi(laptop.repo.dir, laptop.env);
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(ui.loginUrl);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    const key: string = await page.evaluate(() => (globalThis as any).localStorage.getItem('agentbox.key'));
    const reviewed = path.join(laptop.ledger.runsDir, run.name, 'reviewed.jsonl');
    // A page on another port of this address is same-site (SameSite ignores ports): the browser
    // sends it the session cookie. A read from it must not record the patch as shown to the person.
    // And that server itself (a dev server an agent wrote) gets the cookie: replayed, it reads
    // nothing but the page, which holds no secret, and acts on nothing.
    let leaked = '';
    const other = http.createServer((req, res) => {
      leaked ||= req.headers.cookie ?? '';
      res.setHeader('content-type', 'text/html');
      res.end(`<img src="${ui!.url}/api/runs/${run.id}"><img src="${ui!.url}/api/runs/${run.id}/diff">`);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const port = (other.address() as { port: number }).port;
      await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load' });
    } finally {
      other.close();
    }
    expect(leaked).toMatch(new RegExp(`agentbox_session_${ui.port}=[\\w-]{32}`));
    await replayRefused(ui, leaked, run.id, key);
    expect(fs.existsSync(reviewed) ? fs.readFileSync(reviewed, 'utf8') : '').not.toContain('"by":"ui"');
    const refused = fs.readFileSync(path.join(laptop.repo.dir, '.agents', 'ui', 'events.jsonl'), 'utf8');
    expect(refused).toContain('"reason":"a same-site request"');
    expect(refused).toContain('"reason":"missing or wrong x-agentbox-csrf header"');
    // The run's page opened in a tab in the background: drawn, but shown to nobody until it is in
    // front. (Headless Chromium has no background tab: the page's visibility is played here.)
    await page.addInitScript(() => {
      const g = globalThis as any;
      let state = 'hidden';
      Object.defineProperty(g.document, 'visibilityState', { get: () => state, configurable: true });
      g.toFront = () => {
        state = 'visible';
        g.document.dispatchEvent(new g.Event('visibilitychange'));
      };
    });
    await page.goto(`${ui.url}/#/run/${run.id}`);
    await page.locator('#diff[data-sha256]').waitFor();
    // The reads are answered: none records the patch as shown.
    await page.waitForTimeout(500);
    expect(fs.existsSync(reviewed) ? fs.readFileSync(reviewed, 'utf8') : '').toBe('');
    await page.evaluate(() => (globalThis as any).toFront());
    const claim = page.locator('#claim');
    await claim.waitFor();
    expect(await claim.textContent()).toBe(
      'Claimed, not checked here: ran on runner.example (fetched from origin): its publication claims REVIEW · verify passed (claimed by Agentbox Test <test@agentbox.invalid>, not checked here)',
    );
    expect(await page.locator('#claimed').textContent()).toContain('claimed by Agentbox Test');
    await waitFor(
      () => fs.existsSync(reviewed) && fs.readFileSync(reviewed, 'utf8').includes('"by":"ui"'),
      'shown',
    );
    const sha = JSON.parse(fs.readFileSync(reviewed, 'utf8').trim()).sha256;
    expect(await page.locator('#diff').getAttribute('data-sha256')).toBe(sha);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.locator('[data-status="MERGED"]').waitFor();
    expect(asked).toMatch(
      /^This run ran on runner\.example \(fetched from origin\): its publication claims REVIEW · verify passed/,
    );
    expect(asked).toMatch(/patch sha256 [0-9a-f]{12}\) to your working tree and commit them anyway\?/);
    expect(laptop.repo.read('src/app.ts')).toBe("export const x = 'bump x';\n");

    // Re-run (issue 39): its task is the publication's word, so the question quotes it whole
    // before anything is sent; dismissed, nothing starts and nothing is asked of the server.
    const runs = fs.readdirSync(laptop.ledger.runsDir);
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await page.getByRole('button', { name: 'Re-run' }).click();
    await page.waitForTimeout(300);
    expect(asked).toBe(
      `${run.name} was fetched from origin (it ran on runner.example). Its task is that publication's word, not checked here:\n\nbump x\n\nStart this fix task again as a new run, with today's templates and configuration? ${run.name} is left as it is.`,
    );
    expect(fs.readdirSync(laptop.ledger.runsDir)).toEqual(runs);
    const events = fs.readFileSync(path.join(laptop.ledger.runsDir, run.name, 'events.jsonl'), 'utf8');
    expect(events).not.toContain('rerun_refused');
  }, 90_000);
});

/**
 * The session cookie a server on another port of 127.0.0.1 received, replayed as that server could:
 * the page answers (it holds no secret: not the page's key the browser keeps), every API request is
 * refused, reads and the event stream included, and the merge is not made.
 */
async function replayRefused(ui: Ui, cookie: string, id: string, key: string): Promise<void> {
  expect(key).toMatch(/^[\w-]{32}$/);
  const front = await request(ui.port, '/', { headers: { cookie } });
  expect(front.status).toBe(200);
  expect(front.text).not.toContain(key);
  const write = { cookie, origin: ui.url, 'content-type': 'application/json' };
  for (const [method, url, headers] of [
    ['GET', `/api/runs/${id}`, { cookie }],
    ['GET', `/api/runs/${id}/diff`, { cookie, 'sec-fetch-site': 'none' }],
    ['GET', '/api/events', { cookie }],
    ['GET', '/api/events?csrf=', { cookie }],
    ['POST', `/api/runs/${id}/merge`, write],
    ['POST', `/api/runs/${id}/merge`, { ...write, 'x-agentbox-csrf': '' }],
    ['POST', `/api/runs/${id}/merge?csrf=${ui.token}`, write],
  ] as const) {
    const answer = await request(ui.port, url, {
      method,
      headers,
      body: method === 'POST' ? '{"force":true}' : undefined,
    });
    expect(answer.status, `${method} ${url}`).toBe(403);
  }
}
