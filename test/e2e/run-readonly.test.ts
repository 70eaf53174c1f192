import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

const EDIT_TOOLS = ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'];

describe('read-only runs (scout, plan) on the real Claude Code', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'src/db.ts': 'export const pool = 1; // the pool is too small\n' } });
  });
  afterAll(async () => p?.cleanup());

  it('scout answers a question into report.md, offered no edit tools', async () => {
    p.server.setRules([
      {
        when: { turn: 0, anyText: 'why is db latency high' },
        reply: (req) => tool('Read', { file_path: path.join(req.workingDirectory!, 'src/db.ts') }),
      },
      {
        when: { turn: 1, anyText: 'why is db latency high' },
        reply: text('Latency is high because the pool has 1 connection (src/db.ts:1).'),
      },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', 'why is db latency high?']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [name] = p.runs();
    expect(name).toMatch(/^\d{2}-\d{2}-\d{2}_\d{4}__why-is-db-latency-high__[0-9a-f]{6}$/);
    expect(result.stdout).toContain(`✓ ${name} — DONE`);
    expect(result.stdout).toContain(`next          agentbox show ${name?.slice(-6)}\n`);

    const requests = p.server.requests.slice(first);
    for (const r of requests) expect(r.view.tools.filter((t) => EDIT_TOOLS.includes(t))).toEqual([]);
    // The file the model read came back to it: the run really ran the tool.
    expect(requests[1]!.view.toolResults[0]!.content).toContain('the pool is too small');
    expect(requests[0]!.view.system).toContain(`RUN_DIR=${fs.realpathSync(p.runDir(name!))}`);

    expect(p.read(name!, 'report.md')).toContain(
      'Latency is high because the pool has 1 connection (src/db.ts:1).',
    );
    const state = p.state(name!);
    expect(state).toMatchObject({ status: 'DONE', failure: null, tool_calls: 1, claude_pid: null });
    expect(state.session_id).toMatch(/^[0-9a-f-]{36}$/);
    const stream = p
      .read(name!, 'raw/stream.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // No SessionStart hook runs (nothing before init): the session's start is logged from init.
    expect(stream[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: state.session_id });
    expect(p.events(name!).filter((e) => e.event === 'SessionStart')).toEqual([
      {
        ts: expect.any(String),
        event: 'SessionStart',
        session_id: state.session_id,
        source: 'startup',
        via: 'stream',
      },
    ]);
    expect(stream.at(-1)).toMatchObject({ type: 'result', is_error: false });
    // The run's slash commands are gone, and so are the folders made only for them.
    expect(fs.existsSync(path.join(p.repo.dir, '.claude/commands'))).toBe(false);
    const index = fs
      .readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(
      index
        .filter((e) => e.run === name)
        .map((e) => e.status)
        .at(-1),
    ).toBe('DONE');
    expect(fs.readFileSync(path.join(p.repo.dir, '.agents/INDEX.md'), 'utf8')).toContain(name);
    expect(p.repo.git('status', '--porcelain')).toBe('');
  });

  it('INDEX.md lists the run as ACTIVE while claude runs (written once claude has started), then DONE', async () => {
    const index = path.join(p.repo.dir, '.agents', 'INDEX.md');
    let during = '';
    p.server.setRules([
      {
        when: { anyText: 'dashboard while running' },
        reply: () => {
          during = fs.readFileSync(index, 'utf8');
          return text('ok');
        },
      },
    ]);
    const result = await p.agentbox(['scout', 'dashboard while running']);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(during).toMatch(new RegExp(`\\[${name}\\]\\(runs/${name}/\\) \\| scout \\| ACTIVE \\|`));
    expect(fs.readFileSync(index, 'utf8')).toMatch(
      new RegExp(`\\[${name}\\]\\(runs/${name}/\\) \\| scout \\| DONE \\|`),
    );
  });

  it('plan writes plan.md and a report pointing at it; --json prints the outcome', async () => {
    p.server.setRules([
      { when: { anyText: 'plan the pool resize' }, reply: text('1. Raise the pool size.\n2. Load-test.') },
    ]);
    const result = await p.agentbox(['plan', 'plan the pool resize', '--json']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ status: 'DONE', failure: null, files: ['plan.md', 'report.md'] });
    expect(p.read(out.run, 'plan.md')).toBe('1. Raise the pool size.\n2. Load-test.\n');
    expect(p.read(out.run, 'report.md')).toContain('[plan.md](plan.md)');
  });

  it('delivers a task full of shell metacharacters and quotes byte for byte', async () => {
    const task = `fix "a; rm -rf ~" && echo $(whoami) \`id\` 'it''s' \\back\\slash $HOME | tee >out <in *.ts ~ -- --help\n  second line\t€ ✓`;
    p.server.setRules([{ when: { anyText: 'second line' }, reply: text('noted') }]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task]);
    expect(result.code).toBe(0);
    const prompt = p.server.requests[first]!.view.lastUserText;
    expect(prompt).toContain(`\n${task}`);
    const name = p.newest();
    const meta = fs.readFileSync(path.join(p.runDir(name), 'meta.yaml'), 'utf8');
    expect(meta).toContain('task:');
    expect(fs.existsSync(path.join(p.repo.dir, 'out'))).toBe(false);
  });

  it('--detach returns at once and the run finishes in the background', async () => {
    p.server.setRules([
      { when: { anyText: 'detached question' }, reply: { text: 'later answer', delayMs: 8000 } },
    ]);
    const before = p.runs().length;
    const result = await p.agentbox(['scout', 'detached question', '--detach']);
    expect(result.code).toBe(0);
    const name = p.newest();
    expect(p.runs()).toHaveLength(before + 1);
    expect(result.stdout).toContain(name);
    // Still waiting for the model's answer, so --detach returned before the run ended (no clock).
    expect(p.state(name).status).toBe('ACTIVE');
    const deadline = Date.now() + 90_000;
    while (p.state(name).status === 'ACTIVE' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(p.state(name).status).toBe('DONE');
    expect(p.read(name, 'report.md')).toContain('later answer');
    // The worker prints its summary just after it records DONE.
    const logged = Date.now() + 10_000;
    while (!p.read(name, 'raw/agentbox.log').includes('"status"') && Date.now() < logged)
      await new Promise((r) => setTimeout(r, 100));
    expect(p.read(name, 'raw/agentbox.log')).toContain('"status": "DONE"');
  });

  it('status lists the runs newest first, and show explains one', async () => {
    const status = await p.agentbox(['status', '--json']);
    const runs = JSON.parse(status.stdout).runs;
    expect(runs.map((r: { name: string }) => r.name)).toEqual([...p.runs()].reverse());
    const show = await p.agentbox(['show', 'latest']);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('report.md');
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
