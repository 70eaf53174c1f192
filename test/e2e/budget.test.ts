import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/budget/format.js';
import { estimateCost } from '../../src/budget/prices.js';
import { bash, type RequestView, text, tool, type Usage } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';

/** The supervisor's `claude -p` is offered no tools and asked for a marker. */
const isSupervisor = (req: RequestView) => req.tools.length === 0 && req.allText.includes('[COMPLETE]');
const worker = (task: string) => (req: RequestView) => !isSupervisor(req) && req.allText.includes(task);

/** What an agent's turn costs in a real session: most of the prompt read from the cache. */
const TURN: Usage = {
  input_tokens: 1200,
  cache_read_input_tokens: 30_000,
  cache_creation_input_tokens: 2000,
  output_tokens: 150,
};
const times = (n: number) => ({
  input_tokens: n * TURN.input_tokens!,
  output_tokens: n * TURN.output_tokens!,
  cache_read_input_tokens: n * TURN.cache_read_input_tokens!,
  cache_creation_input_tokens: n * TURN.cache_creation_input_tokens!,
});

describe('budgets on the real Claude Code', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project();
  });
  afterAll(async () => p?.cleanup());

  const streamResult = (name: string) =>
    p
      .read(name, 'raw/stream.jsonl')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((e) => e.type === 'result')
      .at(-1);

  it("records the agent's and the supervisor's tokens and cost apart; state, status and show carry them", async () => {
    const task = 'count the files';
    p.server.setRules([
      { when: { turn: 0, predicate: worker(task) }, reply: { ...bash('ls | wc -l'), usage: TURN } },
      { when: { turn: 1, predicate: worker(task) }, reply: { ...text('There are 2 files.'), usage: TURN } },
      {
        when: { predicate: isSupervisor },
        reply: { ...text('[COMPLETE] counted'), usage: { input_tokens: 800, output_tokens: 20 } },
      },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task, '--supervisor', 'claude']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const name = p.newest();
    const state = p.state(name);
    const claudeSaid = streamResult(name);
    const model = p.server.requests[first]!.view.model;

    // The agent: Claude Code's own figures from its result line.
    expect(state.usage.agent).toEqual({
      ...times(2),
      cost_usd: claudeSaid.total_cost_usd,
      estimated: false,
      turns: 2,
      duration_ms: claudeSaid.duration_ms,
      calls: 1,
    });
    // agentbox's price table agrees with Claude Code's for the model it ran.
    expect(estimateCost(model, times(2))).toBeCloseTo(claudeSaid.total_cost_usd, 12);
    expect(state).toMatchObject({ claude_version: '2.1.330', model_used: model });

    // The supervisor's one call, counted apart, from its --output-format json result.
    const sup = p.server.requests.slice(first).filter((r) => isSupervisor(r.view));
    expect(sup).toHaveLength(1);
    expect(state.usage.supervisor).toMatchObject({
      input_tokens: 800,
      output_tokens: 20,
      estimated: false,
      turns: 1,
      calls: 1,
    });
    const supModel = sup[0]!.view.model;
    expect(state.usage.supervisor.cost_usd).toBeCloseTo(
      estimateCost(supModel, { ...times(0), input_tokens: 800, output_tokens: 20 }),
      12,
    );

    const total = state.usage.agent.cost_usd + state.usage.supervisor.cost_usd;
    const status = await p.agentbox(['status']);
    expect(status.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+STATUS\s+AGE\s+COST\s+TASK$/);
    expect(status.stdout.split('\n').find((l) => l.startsWith(name.slice(-6)))).toContain(
      `  ${formatUsd(total)}  ${task}`,
    );
    const statusJson = JSON.parse((await p.agentbox(['status', '--json', '--all'])).stdout);
    expect(statusJson.runs.find((r: { name: string }) => r.name === name).cost_usd).toBeCloseTo(total, 12);

    const show = (await p.agentbox(['show', name])).stdout;
    expect(show).toContain(`  model used  ${model}\n  claude      Claude Code 2.1.330\n`);
    expect(show).toContain(
      `\n  agent       1 process · 2 turns · ${(claudeSaid.duration_ms / 1000).toFixed(1)}s · 2,400 in · 300 out · 60,000 cache read · 4,000 cache write · ${formatUsd(claudeSaid.total_cost_usd)}\n`,
    );
    expect(show).toMatch(/\n {2}supervisor {2}1 call · 1 turn · [\d.]+s · 800 in · 20 out · /);
    expect(show).toContain(`\n  total       ${formatUsd(total)} · no budget\n`);
    const showJson = JSON.parse((await p.agentbox(['show', name, '--json'])).stdout);
    expect(showJson.state).toMatchObject({
      usage: state.usage,
      claude_version: '2.1.330',
      model_used: model,
    });
  });

  it('--max-cost ends a multi-turn run once it passes the budget: ABORTED, budget', async () => {
    const task = 'list forever';
    // Every turn calls a tool: left alone, the agent would never stop.
    p.server.setRules([{ when: { predicate: worker(task) }, reply: { ...bash('echo more'), usage: TURN } }]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task, '--max-cost', '0.05']);
    expect(result.code).toBe(1);
    const name = p.newest();
    const state = p.state(name);
    expect(state).toMatchObject({ status: 'ABORTED', failure: { kind: 'budget' } });
    expect(state.failure.message).toMatch(
      /^cost budget of \$0\.0500 passed: the run has cost \$0\.0\d{3} \(agent \$0\.0\d{3}, supervisor \$0/,
    );
    // A turn costs about $0.02 here: the third passes $0.05, and the run ends there.
    const turns = p.server.requests.slice(first).length;
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(turns).toBeLessThanOrEqual(4);
    expect(state.usage.agent.cost_usd).toBeGreaterThan(0.05);
    expect(state.usage.agent.turns).toBe(turns);
    expect(p.events(name).filter((e) => e.event === 'budget')).toMatchObject([
      { decision: 'abort', max_cost_usd: 0.05, reason: state.failure.message },
    ]);
    expect((await p.agentbox(['show', name])).stdout).toContain('  total       $0.0');
    expect(p.read(name, 'meta.yaml')).toContain('max_cost_usd: 0.05');
    await expectNoProcessesLeft(p.tag);
  });

  it('the cost status shows while a run works never passes the one it ends at (issue 38 item 9)', async () => {
    const task = 'TASK-LIVE-COST write a big file';
    // A long Write the model says took 10 output tokens: its text alone would guess 750.
    const content = `${'x'.repeat(3000)}\n`;
    p.server.setRules([
      {
        when: { turn: 0, predicate: worker(task) },
        reply: (r: RequestView) =>
          tool('Write', { file_path: path.join(r.workingDirectory!, 'big.txt'), content }),
      },
      { when: { turn: 1, predicate: worker(task) }, reply: bash('sleep 3') },
      { when: { predicate: worker(task) }, reply: text('Written.') },
    ]);
    const started = await p.agentbox(['fix', task, '--detach', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const name = JSON.parse(started.stdout).run as string;
    const live: number[] = [];
    let statusSaid: number | null = null;
    const costNow = (s: Record<string, any>) => s.usage.agent.cost_usd + s.usage.supervisor.cost_usd;
    await waitFor(
      async () => {
        const state = p.state(name);
        if (state.status !== 'ACTIVE') return true;
        if (state.usage) live.push(costNow(state));
        // What status itself says, once the Write's cost is in.
        if (statusSaid === null && (live.at(-1) ?? 0) > 0) {
          const status = JSON.parse((await p.agentbox(['status', '--json'])).stdout);
          const row = status.runs.find((r: { name: string }) => r.name === name);
          if (row?.status === 'ACTIVE') statusSaid = row.cost_usd as number;
        }
        return false;
      },
      'the run to end',
      { timeoutMs: 60_000 },
    );
    expect(p.state(name).status).toBe('REVIEW');
    const final = costNow(p.state(name));
    expect(statusSaid, 'status while the run worked').not.toBeNull();
    expect(statusSaid).toBeGreaterThan(0);
    expect(statusSaid).toBeLessThanOrEqual(final);
    for (const usd of live) expect(usd).toBeLessThanOrEqual(final);
  }, 90_000);
});
