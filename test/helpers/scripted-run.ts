import { expect } from 'vitest';
import { type Reply, type RequestView, text } from '../fixtures/model-server/index.js';
import type { Project } from './project.js';

/**
 * One `type` run of `task` whose model answers `turns`, one reply a turn, then "done": its name,
 * the model's requests, and what the model saw of each turn's tool calls.
 */
export async function scriptedRun(
  p: Project,
  type: 'fix' | 'scout',
  task: string,
  turns: (Reply | ((req: RequestView) => Reply))[],
) {
  p.server.setRules([
    ...turns.map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
    { when: { turn: turns.length, anyText: task }, reply: text('done') },
  ]);
  const first = p.server.requests.length;
  const result = await p.agentbox([type, task], { timeoutMs: 300_000 });
  expect(result.code, result.stderr).toBe(0);
  const requests: RequestView[] = p.server.requests.slice(first).map((r) => r.view);
  return {
    name: p.newest(),
    requests,
    results: (turn: number) => requests.find((r) => r.turn === turn + 1)?.toolResults ?? [],
  };
}
