import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, hang, text } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';
import { logInRaw, request, startUi, type Ui } from '../helpers/ui.js';

/**
 * Issue 15: `agentbox ui`'s server and JSON API against a real repository, the real Claude Code and
 * the scripted model: the token exchange, every refusal (token, Host, CSRF, Origin, size, JSON),
 * runs started, watched (SSE) and merged through the API, settings written with comments kept, and
 * a server that can die mid-run without harming it.
 */
describe('agentbox ui: server and API', () => {
  let p: Project;
  let ui: Ui;
  const bearer = () => ({ authorization: `Bearer ${ui.token}` });
  const api = (pathname: string, options: { method?: string; body?: unknown } = {}) =>
    request(ui.port, pathname, {
      method: options.method ?? 'GET',
      headers: { ...bearer(), 'content-type': 'application/json' },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });

  beforeAll(async () => {
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    ui = await startUi(p.repo.dir, p.env);
  });
  afterAll(async () => {
    await ui?.stop();
  });

  async function fixThroughApi(task: string, value: number): Promise<{ name: string; id: string }> {
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: bash(`printf 'module.exports = ${value};\\n' > src/app.js`),
      },
      { when: { anyText: task }, reply: text(`app.js now returns ${value}.`) },
    ]);
    const started = await api('/api/runs', { method: 'POST', body: { type: 'fix', task } });
    expect(started.status, started.text).toBe(201);
    const name = started.json().run as string;
    const id = name.slice(-6);
    await waitFor(async () => (await api(`/api/runs/${id}`)).json().state?.status === 'REVIEW', 'REVIEW', {
      timeoutMs: 90_000,
    });
    return { name, id };
  }

  it("prints a loopback address with a token; the token becomes an HttpOnly SameSite=Strict cookie of this port, the page's key and a clean URL", async () => {
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ui.port).toBeGreaterThan(0);
    const wrong = await request(ui.port, `/?token=${ui.token}x`);
    expect(wrong.status).toBe(401);
    const login = await request(ui.port, `/?token=${ui.token}`);
    expect(login.status).toBe(200);
    expect(login.headers['referrer-policy']).toBe('no-referrer');
    expect(login.headers['cache-control']).toBe('no-store');
    const cookie = String(login.headers['set-cookie']);
    expect(cookie).toMatch(
      new RegExp(`^agentbox_session_${ui.port}=[\\w-]+; HttpOnly; SameSite=Strict; Path=/$`),
    );
    const session = cookie.split(';')[0]!;
    expect(session).not.toContain(ui.token);
    // The page's key, for the page to keep in its origin's storage (web/login-done.js).
    const key = /<meta name="agentbox-key" content="([\w-]{32})">/.exec(login.text)![1]!;
    expect(login.text).toContain('<script type="module" src="/assets/login-done.js"></script>');
    expect(key).not.toBe(ui.token);
    expect(session).not.toContain(key);
    const page = await request(ui.port, '/', { headers: { cookie: session } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    // The page the cookie alone reads holds no secret: the key is only in the exchange's answer.
    expect(page.text).not.toContain(key);
    expect(page.text).not.toContain('__CSRF__');
    expect((await request(ui.port, '/api/runs', { headers: { cookie: session } })).status).toBe(403);
    expect(
      (await request(ui.port, '/api/runs', { headers: { cookie: session, 'x-agentbox-csrf': key } })).status,
    ).toBe(200);
    const noCookie = await request(ui.port, '/');
    expect(noCookie.status).toBe(401);
    expect(noCookie.text).toContain('Open the address');
    // Assets are the package's own: nothing from a CDN.
    for (const asset of [
      '/assets/app.js',
      '/assets/app.css',
      '/assets/diff2html.js',
      '/assets/diff2html.css',
    ]) {
      expect((await request(ui.port, asset)).status, asset).toBe(200);
    }
    expect(page.text).not.toMatch(/src="https?:|href="https?:/);
  });

  it('refuses: no or wrong token 401, a foreign Host 403, missing CSRF or Origin 403 on every POST/PUT, 413, bad JSON 400', async () => {
    expect((await request(ui.port, '/api/runs')).status).toBe(401);
    expect((await request(ui.port, '/api/runs', { headers: { authorization: 'Bearer nope' } })).status).toBe(
      401,
    );
    expect(
      (await request(ui.port, '/api/runs', { headers: { authorization: `Basic ${ui.token}` } })).status,
    ).toBe(401);
    expect((await request(ui.port, `/api/runs?token=${ui.token}`)).status).toBe(401);
    // DNS rebinding: a name that resolves here but is not this server, even with the token.
    for (const host of [
      `evil.example:${ui.port}`,
      `127.0.0.1:${ui.port + 1}`,
      '127.0.0.1',
      `[::1]:${ui.port}`,
    ]) {
      const r = await request(ui.port, '/api/runs', { headers: { ...bearer(), host } });
      expect(r.status, host).toBe(403);
    }
    const { cookie: session, key: csrf } = await logInRaw(ui);
    const origin = ui.url;
    const writes: [string, string][] = [
      ['POST', '/api/runs'],
      ['POST', '/api/runs/latest/merge'],
      ['POST', '/api/runs/latest/discard'],
      ['POST', '/api/runs/latest/stop'],
      ['POST', '/api/runs/latest/resume'],
      ['POST', '/api/runs/latest/inject'],
      ['POST', '/api/runs/latest/restart'],
      ['POST', '/api/runs/latest/rerun'],
      ['POST', '/api/runs/latest/revise'],
      ['POST', '/api/recover'],
      ['PUT', '/api/settings'],
      ['PUT', '/api/templates'],
    ];
    const body = JSON.stringify({ type: 'fix', task: 'x', scope: 'project', supervisor: { mode: 'off' } });
    const before = fs.readFileSync(path.join(p.repo.dir, 'agentbox.yaml'), 'utf8');
    for (const [method, url] of writes) {
      const cases: [string, Record<string, string>][] = [
        ['no CSRF token', { cookie: session, origin }],
        ['wrong CSRF token', { cookie: session, origin, 'x-agentbox-csrf': `${csrf}x` }],
        ['no Origin', { cookie: session, 'x-agentbox-csrf': csrf }],
        ['foreign Origin', { cookie: session, origin: 'http://evil.example', 'x-agentbox-csrf': csrf }],
        [
          'cross-site fetch',
          { cookie: session, origin, 'x-agentbox-csrf': csrf, 'sec-fetch-site': 'cross-site' },
        ],
      ];
      for (const [why, headers] of cases) {
        const r = await request(ui.port, url, {
          method,
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        });
        expect(r.status, `${method} ${url}: ${why}`).toBe(403);
      }
      // What a cross-site <form> can send without a preflight: the cookie, its Origin, a simple type.
      const form = await request(ui.port, url, {
        method,
        headers: { cookie: session, origin: 'http://evil.example', 'content-type': 'text/plain' },
        body,
      });
      expect(form.status, `${method} ${url}: a cross-site text/plain form`).toBe(403);
    }
    expect(fs.readFileSync(path.join(p.repo.dir, 'agentbox.yaml'), 'utf8')).toBe(before);
    expect(p.runs()).toEqual([]);
    // The page's own request passes the checks (and then fails on its merits: no such run).
    const own = await request(ui.port, '/api/runs/zzzzzz/discard', {
      method: 'POST',
      headers: { cookie: session, origin, 'x-agentbox-csrf': csrf, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(own.status, own.text).toBe(404);
    const big = await request(ui.port, '/api/runs', {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'fix', task: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    const bad = await request(ui.port, '/api/runs', {
      method: 'POST',
      headers: bearer(),
      body: '{"type": "fix",',
    });
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatch(/^body is not valid JSON: /);
    const badType = await api('/api/runs', { method: 'POST', body: { type: 'deploy', task: 'x' } });
    expect(badType.status).toBe(400);
    expect(badType.json().error).toContain('"type" must be one of scout, plan, fix, review, not "deploy"');
    const badFilter = await api('/api/runs?status=DONEISH');
    expect(badFilter.status).toBe(400);
    expect(p.runs()).toEqual([]);
    // No CORS: nothing invites another origin to read the answers.
    expect((await api('/api/runs')).headers['access-control-allow-origin']).toBeUndefined();
    // Every refusal is logged, in the ledger's ui/ folder (none of them is about one run).
    const logged = fs
      .readFileSync(path.join(p.repo.dir, '.agents', 'ui', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(logged.every((e) => e.event === 'ui_refused')).toBe(true);
    const statuses = new Set(logged.map((e) => e.status));
    for (const status of [401, 403, 413, 400]) expect(statuses, String(status)).toContain(status);
    expect(logged).toContainEqual(
      expect.objectContaining({
        status: 400,
        method: 'GET',
        path: '/api/runs',
        reason: expect.stringContaining('DONEISH'),
      }),
    );
  });

  it('a fix run started, followed over SSE, reviewed and merged through the API only', async () => {
    // Server-Sent Events: a change is announced within 200 ms of the state file changing.
    const changes: { at: number; data: string }[] = [];
    const controller = new AbortController();
    const stream = await fetch(`${ui.url}/api/events`, { headers: bearer(), signal: controller.signal });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    void (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        for (const m of decoder.decode(value).matchAll(/event: change\ndata: (.*)\n/g))
          changes.push({ at: Date.now(), data: m[1]! });
      }
    })();
    const { name, id } = await fixThroughApi('TASK-UI-FLOW make app return 5', 5);
    expect(changes.some((c) => c.data.includes(name))).toBe(true);
    controller.abort();

    const detail = (await api(`/api/runs/${id}`)).json();
    expect(detail.name).toBe(name);
    expect(detail.patch).toContain('+module.exports = 5;');
    expect(detail.report_html).toContain('app.js now returns 5.');
    expect(detail.events.some((e: any) => e.event === 'result_committed')).toBe(true);
    expect(detail.sensitive).toEqual([]);
    const list = (await api('/api/runs?type=fix&status=REVIEW')).json();
    expect(list.runs.map((r: any) => r.name)).toEqual([name]);
    expect((await api('/api/runs?q=ui-flow')).json().total).toBe(1);
    expect((await api('/api/runs?status=MERGED')).json().total).toBe(0);

    const merged = await api(`/api/runs/${id}/merge`, { method: 'POST', body: { commit: true } });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.json()).toMatchObject({ run: name, status: 'MERGED' });
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 5;\n');
    expect(p.repo.git('log', '-1', '--format=%s').trim()).toBe('TASK-UI-FLOW make app return 5');
    const again = await api(`/api/runs/${id}/merge`, { method: 'POST', body: {} });
    expect(again.status).toBe(400);
    expect(again.json().error).toContain('is already merged');
    const discarded = await api(`/api/runs/${id}/discard`, { method: 'POST', body: {} });
    expect(discarded.status, discarded.text).toBe(200);
    expect(p.repo.git('branch', '--list', `agentbox/${name}`)).toBe('');
  }, 120_000);

  it('a merge that conflicts is a 409 naming the file, and changes nothing', async () => {
    const { id } = await fixThroughApi('TASK-UI-CONFLICT make app return 6', 6);
    fs.writeFileSync(path.join(p.repo.dir, 'src/app.js'), 'module.exports = 7;\n');
    p.repo.git('commit', '-qam', 'seven');
    const r = await api(`/api/runs/${id}/merge`, { method: 'POST', body: {} });
    expect(r.status).toBe(409);
    expect(r.json().error).toContain('src/app.js');
    expect(r.json().code).toBe('MERGE_CONFLICT');
    expect(fs.readFileSync(path.join(p.repo.dir, 'src/app.js'), 'utf8')).toBe('module.exports = 7;\n');
    expect(p.repo.git('status', '--porcelain', '--', 'src')).toBe('');
  }, 120_000);

  it('a merge with sensitive changes needs each one acknowledged, as --yes needs --allow-sensitive', async () => {
    const task = 'TASK-UI-SENSITIVE add a workflow';
    p.server.setRules([
      {
        when: { anyText: task, turn: 0 },
        reply: bash("mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/x.yml"),
      },
      { when: { anyText: task }, reply: text('added a workflow') },
    ]);
    const started = await api('/api/runs', { method: 'POST', body: { type: 'fix', task } });
    const id = (started.json().run as string).slice(-6);
    await waitFor(async () => (await api(`/api/runs/${id}`)).json().state?.status === 'REVIEW', 'REVIEW', {
      timeoutMs: 90_000,
    });
    expect((await api(`/api/runs/${id}`)).json().sensitive).toEqual([
      expect.objectContaining({ path: '.github/workflows/x.yml', kind: 'ci' }),
    ]);
    const refused = await api(`/api/runs/${id}/merge`, { method: 'POST', body: {} });
    expect(refused.status).toBe(409);
    expect(refused.json().sensitive).toEqual([expect.objectContaining({ path: '.github/workflows/x.yml' })]);
    expect(fs.existsSync(path.join(p.repo.dir, '.github/workflows/x.yml'))).toBe(false);
    const merged = await api(`/api/runs/${id}/merge`, {
      method: 'POST',
      body: { acknowledged: ['.github/workflows/x.yml'] },
    });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.json()).toMatchObject({ status: 'MERGED', changed: 1, commit: null });
    expect(fs.readFileSync(path.join(p.repo.dir, '.github/workflows/x.yml'), 'utf8')).toBe('on: push\n');
    fs.rmSync(path.join(p.repo.dir, '.github'), { recursive: true, force: true });
  }, 120_000);

  it("an agent's report with <script> and onerror comes back inert", async () => {
    const task = 'TASK-UI-XSS';
    p.server.setRules([
      {
        when: { anyText: task },
        reply: text(
          'Found it.\n\n<script>window.pwned=1</script>\n\n<img src=x onerror="window.pwned=2">\n\n[click](javascript:window.pwned=3) <a href="javascript:alert(1)">x</a>\n\n**bold** and `code`',
        ),
      },
    ]);
    const started = await api('/api/runs', { method: 'POST', body: { type: 'scout', task } });
    expect(started.status, started.text).toBe(201);
    const id = (started.json().run as string).slice(-6);
    await waitFor(async () => (await api(`/api/runs/${id}`)).json().state?.status === 'DONE', 'DONE', {
      timeoutMs: 90_000,
    });
    const html = (await api(`/api/runs/${id}`)).json().report_html as string;
    expect(html).toContain('<strong>bold</strong>');
    expect(html).not.toMatch(/<script|onerror|javascript:/i);
  }, 120_000);

  it('settings: PUT writes agentbox.yaml keeping its comments; a bad value is a 400 naming the key and writes nothing', async () => {
    const file = path.join(p.repo.dir, 'agentbox.yaml');
    const before = fs.readFileSync(file, 'utf8');
    expect(before).toMatch(/^#/m);
    const ok = await api('/api/settings', {
      method: 'PUT',
      body: { scope: 'project', supervisor: { mode: 'rules' }, runs: { timeout: '45m' } },
    });
    expect(ok.status, ok.text).toBe(200);
    const after = fs.readFileSync(file, 'utf8');
    expect(after).toMatch(/mode: rules/);
    expect(after).toMatch(/timeout: "?45m"?/);
    // A setting that runs a command (or widens a run) is never changed through the UI's token.
    for (const body of [
      { scope: 'project', runs: { notify: 'touch /tmp/agentbox-ui-pwned' } },
      { scope: 'global', runs: { verify: 'true' } },
      { scope: 'project', supervisor: { mode: 'off' }, sandbox: { mode: 'off' } },
      { scope: 'project', claude: { bin: '/tmp/evil' } },
    ]) {
      const refused = await api('/api/settings', { method: 'PUT', body });
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json().error).toMatch(/the web UI does not change it; edit .* yourself/);
      expect(fs.readFileSync(file, 'utf8')).toBe(after);
    }
    // Every comment line is still there.
    for (const line of before.split('\n').filter((l) => l.trim().startsWith('#')))
      expect(after).toContain(line);
    const settings = (await api('/api/settings')).json();
    expect(settings.effective.supervisor.mode).toBe('rules');
    for (const [body, key] of [
      [{ scope: 'project', supervisor: { mode: 'sometimes' } }, 'supervisor.mode'],
      [{ scope: 'project', supervisor: { modes: 'off' } }, 'supervisor.modes'],
      [{ scope: 'project', runs: { timeout: 'soon' } }, 'runs.timeout'],
    ] as const) {
      const r = await api('/api/settings', { method: 'PUT', body });
      expect(r.status, r.text).toBe(400);
      expect(r.json().error).toContain(key);
    }
    expect((await api('/api/settings', { method: 'PUT', body: { scope: 'everywhere' } })).status).toBe(400);
    expect(fs.readFileSync(file, 'utf8')).toBe(after);
    fs.writeFileSync(file, before);
  });

  it('the server holds no state: killed mid-run, the run finishes, and a new server shows it', async () => {
    const task = 'TASK-UI-RESTART';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: { ...bash('true'), delayMs: 1500 } },
      { when: { anyText: task }, reply: text('finished without the UI') },
    ]);
    const started = await api('/api/runs', { method: 'POST', body: { type: 'scout', task } });
    const name = started.json().run as string;
    const login = await logInRaw(ui);
    const before = { port: ui.port, token: ui.token };
    ui.child.kill('SIGKILL');
    await ui.stop();
    await waitFor(() => p.state(name).status === 'DONE', 'the run to finish', { timeoutMs: 90_000 });
    // The same address and login: an open page reconnects by itself.
    ui = await startUi(p.repo.dir, p.env);
    expect({ port: ui.port, token: ui.token }).toEqual(before);
    const again = { cookie: login.cookie, 'x-agentbox-csrf': login.key };
    expect((await request(ui.port, '/api/runs', { headers: again })).status).toBe(200);
    // Kept in the person's state dir, not in the repository.
    const uiDir = path.join(p.home.home, '.local', 'state', 'agentbox', 'ui');
    const [id] = fs.readdirSync(uiDir);
    const kept = path.join(uiDir, id!, 'state.json');
    expect(JSON.parse(fs.readFileSync(kept, 'utf8')).token).toBe(ui.token);
    expect(fs.statSync(kept).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(kept)).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(p.repo.dir, '.agents', 'ui', 'state.json'))).toBe(false);
    const detail = (await api(`/api/runs/${name.slice(-6)}`)).json();
    expect(detail.state.status).toBe('DONE');
    expect(detail.report).toContain('finished without the UI');
  }, 120_000);

  it('stop and inject reach an active run; an unknown run is a 404', async () => {
    const task = 'TASK-UI-STOP';
    p.server.setRules([{ when: { anyText: task }, reply: hang() }]);
    const started = await api('/api/runs', { method: 'POST', body: { type: 'scout', task } });
    const id = (started.json().run as string).slice(-6);
    await waitFor(async () => (await api(`/api/runs/${id}`)).json().state?.status === 'ACTIVE', 'ACTIVE', {
      timeoutMs: 30_000,
    });
    const injected = await api(`/api/runs/${id}/inject`, { method: 'POST', body: { text: 'hurry up' } });
    expect(injected.status, injected.text).toBe(200);
    const active = (await api('/api/runs?status=ACTIVE')).json();
    expect(active.runs[0].now).toMatchObject({ tool_calls: 0 });
    const stopped = await api(`/api/runs/${id}/stop`, { method: 'POST', body: {} });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.json().code, stopped.text).toBe(0);
    expect((await api(`/api/runs/${id}`)).json().state.status).toBe('ABORTED');
    expect((await api('/api/runs/zzzzzz')).status).toBe(404);
    expect((await api('/api/runs/zzzzzz/stop', { method: 'POST', body: {} })).status).toBe(404);
    expect((await api('/api/nothing')).status).toBe(404);
  }, 120_000);

  it('refuses to start inside a run (it is a human gate) and takes only a port number', async () => {
    const r = await p.agentbox(['ui', '--no-open'], { env: { AGENTBOX_RUN: 'x' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('agentbox ui is the human gate and does not run inside');
    const port = await p.agentbox(['ui', '--no-open', '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port takes a port number from 0 to 65535, not "eighty"');
  });

  it('templates: PUT writes a checked template that the next run uses; a broken one is a 400 and nothing is written', async () => {
    const listed = (await api('/api/templates')).json();
    expect(listed.types.scout.globalInput).toBe('built-in scout.input.md');
    expect(listed.dirs.project).toBe(path.join(p.repo.dir, '.agentbox', 'templates'));
    const file = path.join(p.repo.dir, '.agentbox', 'templates', 'scout.input.md');
    for (const [body, problem] of [
      [{ level: 'project', name: 'scout.input.md', text: 'Look at {{nope}}.' }, 'nope'],
      [{ level: 'project', name: '../../evil.md', text: 'x' }, '"name" must be'],
      [{ level: 'project', name: 'deploy.input.md', text: 'x' }, '"name" must be'],
      [{ level: 'attic', name: 'input.md', text: 'x' }, '"level" must be'],
      [
        { level: 'project', name: 'output.md', text: '---\nrequired_sections: 7\n---\n## Summary\n' },
        'required_sections',
      ],
    ] as const) {
      const r = await api('/api/templates', { method: 'PUT', body });
      expect(r.status, r.text).toBe(400);
      expect(r.json().error).toContain(problem);
    }
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(path.join(p.repo.dir, 'evil.md'))).toBe(false);
    const ok = await api('/api/templates', {
      method: 'PUT',
      body: {
        level: 'project',
        name: 'scout.input.md',
        text: 'PROJECT-TEMPLATE-MARK: answer in one line.\n',
      },
    });
    expect(ok.status, ok.text).toBe(200);
    expect((await api('/api/templates')).json().types.scout.projectInput).toBe(file);
    const task = 'TASK-UI-TEMPLATE';
    p.server.setRules([{ when: { anyText: task }, reply: text('one line') }]);
    const first = p.server.requests.length;
    expect((await p.agentbox(['scout', task])).code).toBe(0);
    expect(p.server.requests.slice(first).some((r) => r.view.allText.includes('PROJECT-TEMPLATE-MARK'))).toBe(
      true,
    );
    expect(
      (
        await api('/api/templates', {
          method: 'PUT',
          body: { level: 'project', name: 'scout.input.md', text: null },
        })
      ).status,
    ).toBe(200);
    expect(fs.existsSync(file)).toBe(false);
  }, 120_000);

  it('interrupted runs: the page is offered agentbox recover (restart_mode ask); auto recovers them when the UI starts', async () => {
    const task = 'TASK-UI-INTERRUPTED';
    p.server.setRules([
      {
        when: { lastUserText: 'Continue the task where you left off' },
        reply: text('finished after recovery'),
      },
      { when: { anyText: task, turn: 0 }, reply: bash('echo started') },
      { when: { anyText: task }, reply: hang() },
    ]);
    const started = await p.agentbox(['scout', task, '--detach', '--json']);
    const name = JSON.parse(started.stdout).run as string;
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(task)),
      'turn 1',
    );
    const worker = p.state(name).pid as number;
    process.kill(worker, 'SIGKILL');
    await waitFor(() => {
      try {
        process.kill(worker, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the worker to die');
    // ask (the default): listed, nothing done until the button.
    await ui.stop();
    ui = await startUi(p.repo.dir, p.env);
    expect(ui.output()).not.toContain('recovering');
    const offered = (await api('/api/recover')).json();
    expect(offered.runs).toEqual([expect.objectContaining({ run: name, action: 'resume' })]);
    expect(p.state(name).status).toBe('CRASHED');
    const go = await api('/api/recover', { method: 'POST', body: {} });
    expect(go.status, go.text).toBe(202);
    await waitFor(() => p.state(name).status === 'DONE', 'the recovered run', { timeoutMs: 90_000 });
    expect(p.read(name, 'report.md')).toContain('finished after recovery');
    expect((await api('/api/recover')).json().runs).toEqual([]);

    // auto: the UI recovers them as it starts.
    const again = await p.agentbox(['scout', `${task} again`, '--detach', '--json']);
    const second = JSON.parse(again.stdout).run as string;
    await waitFor(
      () => p.server.requests.some((r) => r.view.turn === 1 && r.view.allText.includes(`${task} again`)),
      'turn 1',
    );
    process.kill(p.state(second).pid as number, 'SIGKILL');
    expect(
      (
        await api('/api/settings', {
          method: 'PUT',
          body: { scope: 'project', runs: { restart_mode: 'auto' } },
        })
      ).status,
    ).toBe(200);
    await ui.stop();
    await waitFor(
      () => p.agentbox(['status']).then(() => p.state(second).status === 'CRASHED'),
      'the watchdog to mark it',
    );
    ui = await startUi(p.repo.dir, p.env);
    await waitFor(
      () =>
        ui.output().includes('recovering 1 interrupted run(s) in the background (runs.restart_mode: auto)'),
      'auto',
    );
    await waitFor(() => p.state(second).status === 'DONE', 'the recovered run', { timeoutMs: 90_000 });
    expect(
      (
        await api('/api/settings', {
          method: 'PUT',
          body: { scope: 'project', runs: { restart_mode: null } },
        })
      ).status,
    ).toBe(200);
  }, 180_000);

  it('--new-token: the old token and every browser login stop working', async () => {
    const login = await logInRaw(ui);
    const old = ui.token;
    expect(await ui.stop()).toBe(130);
    ui = await startUi(p.repo.dir, p.env, ['--new-token']);
    expect(ui.token).not.toBe(old);
    const stale = { cookie: login.cookie, 'x-agentbox-csrf': login.key };
    expect((await request(ui.port, '/api/runs', { headers: stale })).status).toBe(401);
    expect(
      (await request(ui.port, '/api/runs', { headers: { authorization: `Bearer ${old}` } })).status,
    ).toBe(401);
    expect((await api('/api/runs')).status).toBe(200);
  });

  it('Ctrl-C ends it, and no process is left behind', async () => {
    expect(await ui.stop()).toBe(130);
    await expectNoProcessesLeft(p.tag);
  });
});
