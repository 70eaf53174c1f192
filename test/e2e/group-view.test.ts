import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRules, GROUP_FILES, groupOfTask, readGroupFiles } from '../helpers/group.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * A group as a person works with it (issue 31), on a real 3-attempt group against the real Claude
 * Code and a scripted model whose attempts differ: attempt 1 passes runs.verify, attempt 2 fails
 * it, attempt 3 breaks the output contract. `status` shows the group as one row, `show` ranks the
 * attempts with the reason for the order, `diff` shows the best one, one attempt, or two compared.
 */
describe('status, show and diff of a group', () => {
  let p: Project;
  let group: string;
  let id: string;
  let runs: string[];
  beforeAll(async () => {
    p = await project({ files: GROUP_FILES });
    const task = 'TASK-GROUP-VIEW set x';
    p.server.setRules(attemptRules(task, ['pass', 'fail', 'violate']));
    const result = await p.agentbox(['fix', task, '--attempts', '3'], { timeoutMs: 240_000 });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    group = groupOfTask(p.repo.dir, task);
    const files = readGroupFiles(p.repo.dir, group);
    id = files.meta.group_id;
    runs = files.state.members.map((m: { run: string }) => m.run);
  }, 300_000);
  afterAll(async () => p?.cleanup());

  it('status: the group is one row with its counts; its attempts are not listed (also --all, --json)', async () => {
    for (const args of [['status'], ['status', '--all']]) {
      const r = await p.agentbox(args);
      expect(r.code, r.stderr).toBe(0);
      const rows = r.stdout.trimEnd().split('\n').slice(1);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatch(
        new RegExp(
          `^${id}\\s+group\\s+REVIEW\\s+\\S+\\s+\\$[\\d.]+\\s+fix ×3 · 1 passed · 1 failed · TASK-GROUP-VIEW set x$`,
        ),
      );
      for (const run of runs) expect(r.stdout).not.toContain(run.slice(-6));
    }
    const json = JSON.parse((await p.agentbox(['status', '--json'])).stdout);
    expect(json.total).toBe(1);
    expect(json.runs[0]).toMatchObject({ kind: 'group', id, status: 'REVIEW' });
    expect(
      json.runs[0].attempts.map((a: { run: string; verified: boolean | null }) => [a.run, a.verified]),
    ).toEqual([
      [runs[0], true],
      [runs[1], false],
      [runs[2], null],
    ]);
  });

  it('show: the attempts ranked with the reason for the order, the next steps; report.md has the same', async () => {
    const r = await p.agentbox(['show', id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(group);
    expect(r.stdout).toContain('  status      REVIEW\n');
    expect(r.stdout).toMatch(
      /ranking — 1st: attempt 1 — it finished; attempt [23] did not \(aborted: violation\)\n/,
    );
    const table = r.stdout.slice(r.stdout.indexOf('  RANK')).split('\n').slice(1, 4);
    expect(table[0]).toMatch(
      new RegExp(
        `^  1st\\s+1\\s+${runs[0]!.slice(-6)}\\s+\\(default\\)\\s+REVIEW\\s+passed\\s+applied\\s+0\\s+0\\s+2 lines\\s+\\$`,
      ),
    );
    // Attempt 2's checks failed; attempt 3's never ran (it ended on the contract first): 3 ranks above 2.
    expect(table[1]).toMatch(/^ {2}2nd\s+3\s+\w+\s+\(default\)\s+ABORTED\s/);
    expect(table[2]).toMatch(/^ {2}3rd\s+2\s+\w+\s+\(default\)\s+ABORTED\s+FAILED\s/);
    expect(r.stdout).toMatch(
      new RegExp(
        `next:\\n  agentbox diff ${id} +attempt 1's change \\(ranked first\\)\\n  agentbox merge ${id} +merge attempt 1\\n$`,
      ),
    );
    const report = fs.readFileSync(path.join(p.repo.dir, '.agents/groups', group, 'report.md'), 'utf8');
    expect(report).toContain('# Best of 3: TASK-GROUP-VIEW set x\n');
    expect(report).toMatch(/1\. attempt 1 \(`\w+`\): passed runs\.verify; \d+ violations?; 2 lines; /);
    expect(report).toContain('- `patches/agent_2.patch`');
    const json = JSON.parse((await p.agentbox(['show', id, '--json'])).stdout);
    expect(json).toMatchObject({ kind: 'group', status: 'REVIEW', ranking: { best: 1, tie: [] } });
    expect(json.report).toBe(report);
  });

  it('diff: the best attempt saying which, one attempt, two compared, and a refusal', async () => {
    const best = await p.agentbox(['diff', id]);
    expect(best.code, best.stderr).toBe(0);
    expect(best.stdout).toContain('+export const x = 42;');
    expect(best.stderr).toContain(`attempt 1 of 3 in group ${id} (run ${runs[0]!.slice(-6)}), ranked first`);
    const second = await p.agentbox(['diff', id, '--attempt', '2']);
    expect(second.stdout).toContain('+export const x = 2;');
    expect(second.stdout).toBe((await p.agentbox(['diff', runs[1]!.slice(-6)])).stdout);
    const between = await p.agentbox(['diff', id, '--attempts', '1,2']);
    expect(between.code, between.stderr).toBe(0);
    expect(between.stdout).toContain('-export const x = 42;\n+export const x = 2;\n');
    const wrong = await p.agentbox(['diff', id, '--attempt', '4']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(`group ${id} has attempts 1 to 3, not "4"`);
    expect(wrong.stderr).toContain(`agentbox show ${id}`);
    await expectNoProcessesLeft(p.tag);
  });
});
