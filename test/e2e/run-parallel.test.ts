import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

describe('five fix runs started at the same time on one repository', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'shared.txt': 'shared\n' } });
  });
  afterAll(async () => p?.cleanup());

  it('get distinct names, commands, worktrees and patches', async () => {
    const N = 5;
    // Each run writes a file named after its task; the rule keys on the task, never on order.
    p.server.setRules([
      {
        when: { turn: 0, predicate: (req) => /parallel task (\d)/.test(req.allText) },
        reply: (req) => {
          const n = /parallel task (\d)/.exec(req.allText)![1];
          return tool('Write', {
            file_path: path.join(req.workingDirectory!, `task-${n}.txt`),
            content: `from task ${n}\n`,
          });
        },
      },
      { when: { turn: 1 }, reply: text('done') },
    ]);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        p.agentbox(['fix', `parallel task ${i}`, '--json'], { timeoutMs: 120_000 }),
      ),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const outs = results.map((r) => JSON.parse(r.stdout));
    const names = outs.map((o) => o.run as string);
    expect(new Set(names).size).toBe(N);
    expect(new Set(names.map((n) => n.slice(-6))).size).toBe(N);

    const worktrees = new Set<string>();
    for (const out of outs) {
      expect(out.status).toBe('REVIEW');
      const state = p.state(out.run);
      worktrees.add(state.worktree_path);
      const patch = p.read(out.run, 'changes.patch');
      // Exactly the run's own change: its file, and no other run's.
      const task = /parallel task (\d)/.exec(p.read(out.run, 'meta.yaml'))![1];
      expect(patch).toContain(`+++ b/task-${task}.txt`);
      expect(patch.match(/^diff --git/gm)).toHaveLength(1);
      // Claude Code saw this run's commands and no other run's.
      const init = p
        .read(out.run, 'raw/stream.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((e) => e.subtype === 'init');
      const id = out.run.slice(-6);
      const runCommands = (init.slash_commands as string[]).filter((c) => c.startsWith('run_'));
      expect(runCommands.sort()).toEqual(
        [
          `run_${id}:apply_${id}`,
          `run_${id}:fix_${id}`,
          `run_${id}:merge_${id}`,
          `run_${id}:report_${id}`,
        ].sort(),
      );
    }
    expect(worktrees.size).toBe(N);
    // Every INDEX.jsonl line is whole, and the main tree never changed.
    const index = fs.readFileSync(path.join(p.repo.dir, '.agents/INDEX.jsonl'), 'utf8').trim().split('\n');
    for (const line of index) expect(() => JSON.parse(line)).not.toThrow();
    expect(p.repo.git('status', '--porcelain')).toBe('');
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
