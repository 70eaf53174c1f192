import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { modulePreloads, WEB_DIR, webAssets } from '../../src/web/assets.js';
import { startUiServer, type UiServer } from '../../src/web/server.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';
import { request } from '../helpers/ui.js';

const SECRETS = {
  token: 'tok-assets-0123456789',
  session: 'ses-assets-0123456789',
  csrf: 'csrf-assets-01234',
};

/** Every `from './x.js'` and `import('./x.js')` of a page module: what the browser will ask for. */
const importsOf = (source: string) =>
  [...source.matchAll(/(?:from|import\()\s*['"]\.\/([^'"]+)['"]/g)].map((m) => m[1]!);

/**
 * The page's static files (src/web/assets.ts): every module of web/ is served, with its type and
 * the page's CSP, whatever imports it; nothing else is, by any spelling of a path out of web/.
 */
describe('agentbox ui: the page modules and nothing else', () => {
  let ui: UiServer;
  const repo = gitRepo();
  const packageJson = fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');

  beforeAll(async () => {
    ensureLedger(repo.dir);
    ui = await startUiServer({ root: repo.dir, ledger: openLedger(repo.dir), env: {}, secrets: SECRETS });
  });
  afterAll(async () => {
    await ui?.close();
  });

  it('serves every module web/ holds and every one they import, as JavaScript under the CSP', async () => {
    const page = fs.readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8');
    expect(page).toContain('<script type="module" src="/assets/app.js"></script>');
    const modules = fs.readdirSync(WEB_DIR).filter((name) => name.endsWith('.js'));
    expect(modules.length).toBeGreaterThan(5);
    const wanted = new Set(modules);
    for (const name of modules)
      for (const imported of importsOf(fs.readFileSync(path.join(WEB_DIR, name), 'utf8')))
        wanted.add(imported);
    for (const name of wanted) {
      const answer = await request(ui.port, `/assets/${name}`);
      expect(answer.status, name).toBe(200);
      expect(answer.headers['content-type'], name).toBe('text/javascript; charset=utf-8');
      expect(answer.headers['content-security-policy'], name).toContain("script-src 'self'");
      expect(answer.headers['x-content-type-options'], name).toBe('nosniff');
      expect(answer.text, name).toBe(fs.readFileSync(path.join(WEB_DIR, name), 'utf8'));
    }
    // The page asks for every module at once (modulepreload), not one level of imports at a time.
    const served = await request(ui.port, '/', { headers: { authorization: `Bearer ${SECRETS.token}` } });
    const preloaded = [...served.text.matchAll(/<link rel="modulepreload" href="\/assets\/([\w-]+\.js)">/g)];
    // Not the entry, nor the login pages' scripts (web/login.js, web/login-done.js: each runs on its own page).
    expect(preloaded.map((m) => m[1]).sort()).toEqual(
      modules.filter((name) => !['app.js', 'login.js', 'login-done.js'].includes(name)).sort(),
    );
    expect(served.text).not.toContain('__PRELOADS__');
    const css = await request(ui.port, '/assets/app.css');
    expect([css.status, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);
  });

  // Without and with the token: a path the map does not hold is never a file, not even for a browser
  // that is logged in (the API answers it, 404 or 401).
  it.each([
    '/assets/../package.json',
    '/assets/%2e%2e/package.json',
    '/assets/%2E%2E/%2E%2E/package.json',
    '/assets/..%2fpackage.json',
    '/assets/..%2F..%2Fpackage.json',
    '/assets/..\\package.json',
    '/assets/..%5cpackage.json',
    '/assets/diff2html.js/../../package.json',
    '/assets//package.json',
    '/assets/%2fetc%2fpasswd',
    '/assets/index.html',
    '/assets/app.js/',
    '/assets/APP.JS',
    '/assets/app.js%00.css',
    '/assets/__proto__',
    '/assets/constructor',
    '/assets/',
    '/web/app.js',
    '/package.json',
    '/../package.json',
  ])('%s is not a file', async (spelling) => {
    const asked: Record<string, string>[] = [{}, { authorization: `Bearer ${SECRETS.token}` }];
    for (const headers of asked) {
      const answer = await request(ui.port, spelling, { headers });
      expect(answer.status, spelling).not.toBe(200);
      expect(answer.text, spelling).not.toContain('"name": "agentbox"');
      expect(answer.text, spelling).not.toContain('root:');
      expect(answer.text, spelling).not.toContain('<script');
    }
    expect(packageJson).toContain('"name": "agentbox"');
  });

  it('a browser without the token gets the login page, and the refusal is logged like any other', async () => {
    const problems: unknown[] = [];
    const other = await startUiServer({
      root: repo.dir,
      ledger: openLedger(repo.dir),
      env: {},
      secrets: SECRETS,
      onProblem: (problem) => problems.push(problem),
    });
    try {
      const page = await request(other.port, '/#/run/abc');
      expect(page.status).toBe(401);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<script type="module" src="/assets/login.js"></script>');
      const api = await request(other.port, '/api/runs');
      expect(api.status).toBe(401);
      expect(problems).toEqual([
        expect.objectContaining({ status: 401, method: 'GET', path: '/' }),
        expect.objectContaining({ status: 401, method: 'GET', path: '/api/runs' }),
      ]);
    } finally {
      await other.close();
    }
  });

  it("serves the build's bundle as the entry, with nothing to preload; the modules when there is none", () => {
    const bundle = path.join(tempDir('agentbox-web-bundle-'), 'app.js');
    fs.writeFileSync(bundle, '// bundled\n');
    const bundled = webAssets(WEB_DIR, bundle);
    expect(bundled.get('/assets/app.js')).toEqual({
      file: bundle,
      type: 'text/javascript; charset=utf-8',
      bundled: true,
    });
    // The modules stay served (a page loaded before an upgrade may still ask for one).
    expect(bundled.get('/assets/run.js')?.file).toBe(path.join(WEB_DIR, 'run.js'));
    expect(modulePreloads(bundled)).toBe('');
    // A build whose bundle is missing (a broken install) serves the modules, preloaded.
    const modules = webAssets(WEB_DIR, path.join(path.dirname(bundle), 'none.js'));
    expect(modules.get('/assets/app.js')?.file).toBe(path.join(WEB_DIR, 'app.js'));
    expect(modulePreloads(modules)).toContain('<link rel="modulepreload" href="/assets/run.js">');
  });

  it('takes a plain lower-case .js or .css name at the top of web/, nothing hidden, nested or other', () => {
    const dir = tempDir('agentbox-web-');
    for (const name of [
      'app.js',
      'run-actions.js',
      'app.css',
      '.app.js.swp',
      'app.js~',
      'Evil.js',
      'notes.txt',
    ]) {
      fs.writeFileSync(path.join(dir, name), '');
    }
    fs.writeFileSync(path.join(dir, 'index.html'), '');
    fs.mkdirSync(path.join(dir, 'sub.js'));
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'inner.js'), '');
    const served = [...webAssets(dir).keys()].filter((key) => !key.startsWith('/assets/diff2html'));
    expect(served).toEqual(['/assets/app.css', '/assets/app.js', '/assets/run-actions.js']);
    // A missing web/ (a broken install) serves diff2html's only; the page itself then answers 500.
    expect([...webAssets(path.join(dir, 'none')).keys()]).toEqual([
      '/assets/diff2html.js',
      '/assets/diff2html.css',
    ]);
  });
});
