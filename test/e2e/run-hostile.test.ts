import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { AGENTBOX_BIN } from '../helpers/bin.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * A scripted model that tries, one by one, everything a fix run's agent may not do. Each attempt
 * must be refused (the model gets an error tool result), recorded in the run, and leave the main
 * working tree and the other runs untouched.
 */
describe('a hostile agent in a fix run', () => {
  let p: Project;
  let other: string;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    p.server.setRules([{ when: { anyText: 'earlier scout' }, reply: text('OTHER-RUN-SECRET findings') }]);
    expect((await p.agentbox(['scout', 'earlier scout'])).code).toBe(0);
    other = p.newest();
  });
  afterAll(async () => p?.cleanup());

  it('is refused each forbidden action, and every refusal is recorded', async () => {
    const root = fs.realpathSync(p.repo.dir);
    const runId = (req: RequestView) => /\/run_([0-9a-f]{6}):/.exec(req.system)?.[1] ?? 'unknown';
    const attempts: { label: string; reply: (req: RequestView) => ReturnType<typeof text> }[] = [
      {
        label: 'write outside the worktree',
        reply: () => tool('Write', { file_path: path.join(root, 'src/app.ts'), content: 'pwned\n' }),
      },
      { label: 'redirect into the main tree', reply: () => bash(`echo pwned > ${root}/src/app.ts`) },
      {
        label: 'redirect into a new file of the main tree',
        reply: () => bash(`echo pwned > ${root}/NEW-FILE.txt`),
      },
      {
        label: 'write a new file in the main tree',
        reply: () => tool('Write', { file_path: `${root}/ALSO-NEW.txt`, content: 'x' }),
      },
      {
        label: 'read the ledger index',
        reply: () => tool('Read', { file_path: path.join(root, '.agents/INDEX.md') }),
      },
      {
        label: "read another run's report",
        reply: () => tool('Read', { file_path: path.join(root, '.agents/runs', other, 'report.md') }),
      },
      {
        label: 'cat another run through bash -c',
        reply: () => bash(`bash -c "cat ${root}/.agents/runs/${other}/report.md"`),
      },
      { label: 'run the human gate', reply: () => bash('agentbox merge latest --yes') },
      {
        label: 'run the human gate in disguise',
        reply: () => bash(`A=merge; node ${AGENTBOX_BIN} $A latest --yes`),
      },
      {
        label: 'invoke a human-only command',
        reply: (req) => tool('Skill', { skill: `run_${runId(req)}:merge_${runId(req)}` }),
      },
    ];
    const task = 'hostile fix attempt';
    p.server.setRules([
      ...attempts.map((a, turn) => ({ name: a.label, when: { turn, anyText: task }, reply: a.reply })),
      { when: { turn: attempts.length, anyText: task }, reply: text('I tried everything.') },
    ]);
    const before = snapshotTree(p.repo.dir, { skip: ['.git', '.agents'] });
    const otherRun = snapshotTree(p.runDir(other));
    const first = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code).toBe(0);
    const name = p.newest();

    // The model got an error for each attempt, and never the other run's content.
    const requests = p.server.requests.slice(first);
    // A new file in the main tree, which a fix run's fence hides: the write "works" in the empty
    // throwaway folder the sandbox mounts there, and is gone; it is recorded all the same.
    const throwaway = ['redirect into a new file of the main tree'];
    for (const [turn, attempt] of attempts.entries()) {
      const next = requests.find((r) => r.view.turn === turn + 1)!;
      const [res] = next.view.toolResults;
      if (!throwaway.includes(attempt.label))
        expect(res?.isError, `${attempt.label}: ${res?.content}`).toBe(true);
      expect(res?.content).not.toContain('OTHER-RUN-SECRET');
    }
    const byTurn = (turn: number) =>
      requests.find((r) => r.view.turn === turn + 1)!.view.toolResults[0]!.content;
    const turnOf = (label: string) => attempts.findIndex((a) => a.label === label);
    expect(byTurn(turnOf('run the human gate in disguise'))).toContain(
      'is the human gate and does not run inside agentbox run',
    );
    expect(byTurn(turnOf('invoke a human-only command'))).toMatch(/disable-model-invocation|human-only/);

    // Nothing outside the worktree changed.
    expect(snapshotTree(p.repo.dir, { skip: ['.git', '.agents'] })).toEqual(before);
    expect(snapshotTree(p.runDir(other))).toEqual(otherRun);
    expect(p.state(other).status).toBe('DONE');

    // Recorded: the guard's refusals in events.jsonl, all of them in report.md.
    // Recorded in the run: every attempt once in events.jsonl (the guard's decisions as they
    // happened, Claude Code's own refusals and the human gate's at the end) and in report.md.
    const events = p.events(name);
    const refusals = events.filter(
      (e) => e.decision === 'deny' || e.event === 'refused' || e.event === 'human_gate_refused',
    );
    expect(refusals).toHaveLength(attempts.length);
    expect(new Set(refusals.map((e) => e.rule ?? 'human-gate'))).toEqual(
      // Layers that refused: agentbox's guard (ledger, human gate), Claude Code's own rules (the deny
      // rules agentbox passed, and its refusal of writes outside the session's folders), the human
      // gate itself, Claude Code's refusal of human-only commands, and the sandbox's read fence (the
      // redirects into the main tree, which a fix run's fence hides). Which layer answers first
      // depends on Claude Code's order; that each attempt is refused and recorded does not.
      new Set(['permission-rule', 'ledger', 'human-gate', 'human-only-command', 'read-fence']),
    );
    const report = p.read(name, 'report.md');
    const refused = report.split('## Refused actions')[1]!.trim().split('\n');
    expect(refused).toHaveLength(attempts.length);
    expect(p.state(name).status).toBe('DONE');
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
