import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AirlockScope } from '../../src/airlock/guard.js';
import { type Endpoint, startEndpoint } from '../../src/endpoint/server.js';
import { EventLog } from '../../src/ledger/events.js';
import { createRunHookHandler } from '../../src/supervisor/hooks.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { cleanupLater } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/git-repo.js';

/** A run's endpoint as `agentbox run` wires it: airlock, then the supervisor (mode rules), one EventLog. */
async function runEndpoint() {
  const root = tempDir('agentbox-burst-');
  const ledgerDir = path.join(root, '.agents');
  const runDir = path.join(ledgerDir, 'runs', '25-11-22_1430__burst__abc123');
  fs.mkdirSync(runDir, { recursive: true });
  const scope: AirlockScope = { type: 'scout', repoRoot: root, ledgerDir, runDir, worktree: null };
  const log = new EventLog(runDir);
  const supervisor = new Supervisor({
    config: { mode: 'rules', maxIterations: 50, loopLimit: 3 },
    task: 'burst',
    runType: 'scout',
    runDir,
    log,
    startedAt: Date.now(),
  });
  const problems: { status: number; reason: string }[] = [];
  const endpoint: Endpoint = await startEndpoint({
    handler: createRunHookHandler({ scope, log, launchDir: root, supervisor }),
    onProblem: (p) => problems.push(p),
  });
  cleanupLater(() => endpoint.close());
  const post = (event: string, body: string, token: string | null = endpoint.token) =>
    fetch(`${endpoint.url}/hook/${event}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body,
    });
  return { log, supervisor, problems, post };
}

const toolEvent = (i: number) => ({
  hook_event_name: 'PostToolUse',
  session_id: 'session-1',
  tool_name: 'Bash',
  tool_use_id: `toolu_${String(i).padStart(6, '0')}`,
  tool_input: { command: `echo call-${i}` },
  tool_response: `out-${i}`,
});
const excerptOf = (i: number) => `{"command":"echo call-${i}"} → "out-${i}"`;

/** events.jsonl read raw: every line must be whole JSON, and the file must end with a newline. */
function readLines(log: EventLog): Record<string, unknown>[] {
  const text = fs.readFileSync(log.file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function expectEveryCallOnce(entries: Record<string, unknown>[], count: number): void {
  const calls = entries.filter((e) => e.event === 'PostToolUse');
  expect(calls).toHaveLength(count);
  const excerpts = calls.map((e) => e.excerpt as string);
  expect(new Set(excerpts).size).toBe(count);
  expect([...excerpts].sort()).toEqual(Array.from({ length: count }, (_, i) => excerptOf(i)).sort());
  expect(calls.every((e) => e.tool === 'Bash' && e.ok === true && typeof e.ts === 'string')).toBe(true);
}

/** A response read to its end (so its connection is free again), as its status. */
async function settled(kind: string, response: Response): Promise<{ kind: string; status: number }> {
  await response.arrayBuffer();
  return { kind, status: response.status };
}

describe('a burst of hook events', () => {
  it('1,000 concurrent PostToolUse events are all answered and all recorded, none lost', async () => {
    const { log, supervisor, problems, post } = await runEndpoint();
    const responses = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => post('PostToolUse', JSON.stringify(toolEvent(i)))),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(1000).fill(200));
    expect(await Promise.all(responses.map((r) => r.json()))).toEqual(Array(1000).fill({}));
    expect(problems).toEqual([]);

    const entries = readLines(log);
    expect(entries).toHaveLength(1000);
    expectEveryCallOnce(entries, 1000);
    // The supervisor saw them all too (it keeps the last 50), and still decides the Stop.
    expect(supervisor.history).toHaveLength(50);
    const stop = await post('Stop', JSON.stringify({ hook_event_name: 'Stop', stop_hook_active: false }));
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({});
    expect(readLines(log).at(-1)).toMatchObject({ event: 'Stop', iteration: 1, decision: 'complete' });
  });

  it('200 bad requests interleaved with 1,000 good ones lose no good event', async () => {
    const { log, problems, post } = await runEndpoint();
    const requests: Promise<{ kind: string; status: number }>[] = [];
    let good = 0;
    for (let n = 0; n < 1200; n++) {
      // Every sixth request is bad: alternately no secret, a wrong secret, and a body that is not JSON.
      if (n % 6 === 5) {
        const bad = Math.floor(n / 6) % 3;
        const body = JSON.stringify({ ...toolEvent(100_000 + n), tool_input: { command: 'bad' } });
        const sent =
          bad === 0
            ? post('PostToolUse', body, null)
            : bad === 1
              ? post('PostToolUse', body, 'f'.repeat(64))
              : post('PostToolUse', `${body.slice(0, 20)}{nope`);
        requests.push(sent.then((r) => settled(`bad${bad}`, r)));
      } else {
        const sent = post('PostToolUse', JSON.stringify(toolEvent(good++)));
        requests.push(sent.then((r) => settled('good', r)));
      }
    }
    expect(good).toBe(1000);
    const results = await Promise.all(requests);
    const byKind = (kind: string) => results.filter((r) => r.kind === kind).map((r) => r.status);
    expect(byKind('good')).toEqual(Array(1000).fill(200));
    expect([...byKind('bad0'), ...byKind('bad1')]).toEqual(Array(134).fill(401));
    expect(byKind('bad2')).toEqual(Array(66).fill(400));
    expect(problems).toHaveLength(200);

    const entries = readLines(log);
    expect(entries).toHaveLength(1000);
    expectEveryCallOnce(entries, 1000);
    expect(JSON.stringify(entries)).not.toContain('"bad"');
  });
});
