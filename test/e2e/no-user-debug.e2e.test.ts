import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * SUP-1: a run goes from task to REVIEW with no human step. The agent forgets a section of the
 * required answer, then claims a verification that fails; the supervisor corrects both (the
 * output contract, then runs.verify in the worktree), the agent fixes its work, and the run ends
 * ready for review. Every model call went through Claude Code launched by agentbox.
 */
describe('from task to REVIEW with no human step', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({
      files: {
        'src/app.ts': 'export const x = 1;\n',
        'test.sh':
          'grep -q "x = 42" src/app.ts || { echo "FAIL: x should be 42"; exit 1; }\necho "1 test passed"\n',
      },
    });
    // The built-in fix output template (Summary, Changes, Verification) and the project's test.
    fs.writeFileSync(
      path.join(p.repo.dir, 'agentbox.yaml'),
      'supervisor:\n  allow_raw_output: false\nruns:\n  verify: sh test.sh\n',
    );
  });
  afterAll(async () => p?.cleanup());

  it('corrects a missing section and a failing verification, then reaches REVIEW', async () => {
    const task = 'make x the answer to everything';
    const edit = (value: string) => (r: RequestView) =>
      tool('Edit', {
        file_path: path.join(r.workingDirectory!, 'src/app.ts'),
        old_string: /export const x = \d+;/.exec(
          fs.readFileSync(path.join(r.workingDirectory!, 'src/app.ts'), 'utf8'),
        )![0],
        new_string: `export const x = ${value};`,
      });
    const full = '## Summary\nSet x.\n\n## Changes\nsrc/app.ts: x\n\n## Verification\nsh test.sh passes.';
    p.server.setRules(
      [
        edit('2'),
        text('## Summary\nSet x.\n\n## Changes\nsrc/app.ts: x'),
        text(full),
        edit('42'),
        text(full),
      ].map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
    );
    const from = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');

    const requests = p.server.requests.slice(from).map((r) => r.view);
    expect(requests.map((r) => r.turn)).toEqual([0, 1, 2, 3, 4]);
    expect(requests[2]!.lastUserText).toContain('lacks the section `## Verification`');
    expect(requests[3]!.lastUserText).toContain('`sh test.sh` failed (exit code 1)');
    expect(requests[3]!.lastUserText).toContain('FAIL: x should be 42');
    const events = p.events(name);
    expect(events.filter((e) => e.event === 'violation').map((e) => [e.type, e.action])).toEqual([
      ['missing_section', 'correct'],
      ['verify_failed', 'correct'],
    ]);
    expect(events.filter((e) => e.event === 'verify').map((e) => e.ok)).toEqual([false, true]);
    expect(p.state(name).output).toMatchObject({
      applied: true,
      violations: 2,
      corrections: 2,
      verified: true,
    });
    expect(p.read(name, 'changes.patch')).toContain('export const x = 42;');
    const report = p.read(name, 'report.md');
    expect(report.startsWith(`# fix report: ${name}`)).toBe(true);
    expect(report).toContain('verification: passed');
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
