import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { startPty } from '../helpers/pty.js';
import { request, startUi, type Ui } from '../helpers/ui.js';

const SUPERVISOR = 'You supervise a Claude Code agent';
const isSupervisor = (req: RequestView) => req.allText.includes(SUPERVISOR);
const iteration = (req: RequestView) => Number(/Iteration (\d+)\//.exec(req.allText)?.[1] ?? 0);
const TASK = 'make app.js return 2';

/**
 * Issue 30, the transcript: a fix run against the real Claude Code where a scripted model reads,
 * edits, runs Bash (a long output), is refused a read of the ledger, and is sent on by the
 * supervisor's [CONTINUE]; then `agentbox show --transcript` (lines and JSON) and the API route
 * give the same entries, in order, with the refusal and the correction in place.
 */
describe('the transcript of a run (real Claude Code)', () => {
  let p: Project;
  let ui: Ui | undefined;
  let name: string;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.js': 'module.exports = 1;\n' } });
    const root = fs.realpathSync(p.repo.dir);
    const worker: Rule['reply'][] = [
      (r) => tool('Read', { file_path: path.join(r.workingDirectory!, 'src/app.js') }),
      (r) =>
        tool('Edit', {
          file_path: path.join(r.workingDirectory!, 'src/app.js'),
          old_string: 'module.exports = 1;',
          new_string: 'module.exports = 2;',
        }),
      bash('seq 1 3000'),
      () => tool('Read', { file_path: path.join(root, '.agents/INDEX.md') }),
      text('First pass done ✓ 日本 \u001b[31mred\u001b[0m \u202eevil'),
      text('Checked: app.js returns 2.'),
    ];
    p.server.setRules([
      {
        name: 'supervisor',
        when: { predicate: (req) => isSupervisor(req) && req.allText.includes(TASK) },
        reply: (req) =>
          iteration(req) === 1
            ? text('[CONTINUE] check the edit once more')
            : text('[COMPLETE] app.js returns 2'),
      },
      ...worker.map((reply, turn) => ({
        when: { turn, predicate: (req: RequestView) => !isSupervisor(req) && req.allText.includes(TASK) },
        reply,
      })),
    ]);
    const result = await p.agentbox(['fix', TASK, '--supervisor', 'claude']);
    expect(result.code, result.stderr).toBe(0);
    name = p.newest();
  }, 120_000);
  afterAll(async () => {
    await ui?.stop();
    await p?.cleanup();
  });

  it('show --transcript prints each read, edit, Bash call and result, the refusal and the correction, in order and safe for a terminal', async () => {
    const shown = await p.agentbox(['show', name.slice(-6), '--transcript']);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trimEnd().split('\n');
    const index = (re: RegExp) => {
      const i = lines.findIndex((l) => re.test(l));
      expect(i, `${re} in\n${shown.stdout.slice(0, 4000)}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [
      index(/^\d\d:\d\d:\d\d {2}→ Read .*src\/app\.js$/),
      index(/^\d\d:\d\d:\d\d {2}→ Edit .*src\/app\.js$/),
      index(/→ Bash seq 1 3000$/),
      index(/← 1 2 3 4 5 .* \[cut: 13\.\dK chars\]$/),
      index(/→ Read .*\.agents\/INDEX\.md$/),
      index(/✗ refused/),
      index(/First pass done ✓ 日本 red \\u202eevil$/),
      index(/↻ correction \(claude\): check the edit once more$/),
      index(/Checked: app\.js returns 2\.$/),
      index(/◆ supervisor: complete \(claude\) app\.js returns 2/),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(shown.stdout).not.toMatch(/[\x1b\x07\u202e]/);
    // The Read's result is the file's lines, numbered in a column (issue 38 item 11).
    expect(lines.slice(order[0]! + 1, order[0]! + 4)).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d {4}← 2 lines$/),
      `${' '.repeat(14)}1  module.exports = 1;`,
      `${' '.repeat(14)}2`,
    ]);

    // In a terminal it goes through git's pager, as agentbox diff does; --no-pager prints straight out.
    const env = { ...p.env, GIT_PAGER: "sed 's/^/paged: /'" };
    const paged = startPty(['show', name, '--transcript'], { cwd: p.repo.dir, env, cols: 200 });
    expect(await paged.exited).toBe(0);
    expect(paged.output()).toMatch(/paged: .*→ Edit/);
    const straight = startPty(['show', name, '--transcript', '--no-pager'], {
      cwd: p.repo.dir,
      env,
      cols: 200,
    });
    expect(await straight.exited).toBe(0);
    expect(straight.output()).toMatch(/→ Edit/);
    expect(straight.output()).not.toContain('paged: ');

    // watch --transcript prints the same lines, then the run's end.
    const watched = await p.agentbox(['watch', name.slice(-6), '--transcript']);
    expect(watched.code, watched.stderr).toBe(0);
    const seen = watched.stdout.trimEnd().split('\n');
    expect(seen.slice(1, -2)).toEqual(lines);
    expect(seen.at(-2)).toContain(`${name} — REVIEW · exit 0`);
  });

  it('--json gives one entry per line; the API pages the same entries by cursor, and gives a cut result whole', async () => {
    const json = await p.agentbox(['show', name, '--transcript', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const entries = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(json.stdout).not.toMatch(/[\x1b\x07\u202e]/);
    expect(entries.find((e) => e.kind === 'text')?.text).toContain('\u001b[31mred\u001b[0m \u202eevil');
    const calls = entries.filter((e) => e.kind === 'tool_call').map((e) => e.tool);
    expect(calls).toEqual(['Read', 'Edit', 'Bash', 'Read']);
    const refused = entries.find((e) => e.kind === 'tool_result' && e.refused_by);
    expect(refused).toBeTruthy();
    const long = entries.find((e) => e.kind === 'tool_result' && e.cut);
    expect(long.cut.length).toBeGreaterThan(13_000);
    expect(entries.some((e) => e.kind === 'correction' && e.text.includes('check the edit once more'))).toBe(
      true,
    );
    expect(entries.every((e) => typeof e.at === 'string')).toBe(true);

    ui = await startUi(p.repo.dir, p.env);
    const get = (
      pathname: string,
      headers: Record<string, string> = { authorization: `Bearer ${ui!.token}` },
    ) => request(ui!.port, pathname, { headers });
    const ids: string[] = [];
    let after = '';
    for (let i = 0; i < 50; i++) {
      const page = await get(
        `/api/runs/${name.slice(-6)}/transcript?limit=4${after ? `&after=${after}` : ''}`,
      );
      expect(page.status, page.text).toBe(200);
      const body = page.json();
      expect(body).toMatchObject({ name, source: 'raw/stream.jsonl', active: false });
      ids.push(...body.entries.map((e: { id: string }) => e.id));
      after = body.next;
      if (!body.more) break;
    }
    expect(ids).toEqual(entries.map((e) => e.id));
    const whole = await get(`/api/runs/${name}/transcript/${long.id}`);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.json().entry.text).toHaveLength(long.cut.length);
    expect(whole.json().entry.text.endsWith('2999\n3000')).toBe(true);

    // Bad input is the client's, said plainly.
    const bad = await get(`/api/runs/${name}/transcript?after=../../etc/passwd`);
    expect(bad.status).toBe(400);
    expect(bad.json().error).toContain('not a transcript cursor');
    expect((await get(`/api/runs/${name}/transcript?limit=100000`)).status).toBe(400);
    expect((await get(`/api/runs/${name}/transcript/s0.0x`)).status).toBe(400);
    expect((await get(`/api/runs/nope00/transcript`)).status).toBe(404);
  }, 60_000);

  it('the route answers only this server, with its token: no token, a wrong one, a cookie of another, another Host', async () => {
    const at = `/api/runs/${name}/transcript`;
    const spellings: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${ui!.token}x` },
      { authorization: `bearer ${ui!.token}` },
      { cookie: `agentbox_session_${ui!.port}=${ui!.token}` },
      { authorization: ui!.token },
    ];
    for (const headers of spellings) {
      const answer = await request(ui!.port, at, { headers });
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(answer.text).not.toContain('tool_call');
    }
    for (const host of ['evil.example', `localhost.evil.example:${ui!.port}`, `127.0.0.1:${ui!.port + 1}`]) {
      const answer = await request(ui!.port, at, { headers: { host, authorization: `Bearer ${ui!.token}` } });
      expect(answer.status, host).toBe(403);
    }
    for (const ref of ['..%2F..%2Fetc', '%2e%2e', '..', `${name}%00`, `${name}%2F..%2F..`]) {
      const answer = await request(ui!.port, `/api/runs/${ref}/transcript`, {
        headers: { authorization: `Bearer ${ui!.token}` },
      });
      expect([400, 404], `${ref}: ${answer.text}`).toContain(answer.status);
    }
    await ui!.stop();
    ui = undefined;
    await expectNoProcessesLeft(p.tag);
  }, 30_000);
});
