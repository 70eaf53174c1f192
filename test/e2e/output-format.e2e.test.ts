import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, hang, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * SUP-3 and SUP-7 on the real Claude Code: the final answer is checked against the output template
 * at every Stop, corrected in a round trip, or the run fails with `Supervisor violation: <type>`;
 * the project's verification runs in the worktree, in the run's sandbox; a direct execution
 * attempt is refused and recorded. Nothing here needs a person.
 */
const CONTRACT = `---
required_sections: [Summary, Evidence]
---
# scout report: {{run}}

## Summary
The answer in two sentences.

## Evidence
file:line references.
`;
/** A fix run's script: set x in src/app.ts, then end with `answer`. */
const setX = (task: string, value: number, answer: string) => [
  {
    when: { anyText: task, turn: 0 },
    reply: (r: RequestView) =>
      tool('Edit', {
        file_path: path.join(r.workingDirectory!, 'src/app.ts'),
        old_string: 'export const x = 1;',
        new_string: `export const x = ${value};`,
      }),
  },
  { when: { anyText: task }, reply: text(answer) },
];
const corrected = (req: RequestView) => req.lastUserText.includes('Stop hook feedback');

describe('the output contract', () => {
  let p: Project;
  let root: string;
  const config = (yaml: string) => fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), yaml);
  beforeAll(async () => {
    p = await project({
      files: {
        'src/app.ts': 'export const x = 1;\n',
        'test.sh': 'grep -q 42 src/app.ts || { echo "x is not 42"; exit 1; }\n',
      },
    });
    root = fs.realpathSync(p.repo.dir);
    const dir = path.join(p.repo.dir, '.agentbox', 'templates');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'scout.output.md'), CONTRACT);
  });
  afterAll(async () => p?.cleanup());

  it('a missing section is corrected in one round trip; report.md is the answer formatted by the template', async () => {
    const task = 'TASK-CORRECT where is x?';
    const final = '## Evidence\nsrc/app.ts:1 defines it.\n\n## Summary\nx is in src/app.ts.';
    p.server.setRules([
      { when: { anyText: task, predicate: corrected }, reply: text(final) },
      { when: { anyText: task }, reply: text('## Summary\nx is in src/app.ts.') },
    ]);
    const from = p.server.requests.length;
    const result = await p.agentbox(['scout', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('DONE');
    // The model was shown the shape, and got one precise correction.
    const requests = p.server.requests.slice(from).map((r) => r.view);
    expect(requests[0]!.allText).toContain('## Evidence');
    const feedback = requests.find(corrected)!.lastUserText;
    expect(feedback).toContain('Your final answer lacks the section `## Evidence`; add it.');
    const violations = p.events(name).filter((e) => e.event === 'violation');
    expect(violations).toEqual([
      expect.objectContaining({
        type: 'missing_section',
        detail: '## Evidence',
        action: 'correct',
        correction: 1,
      }),
    ]);
    // The raw answer is kept; report.md is it, formatted: the template's title and order.
    expect(p.read(name, 'raw/answer.md')).toBe(`${final}\n`);
    const report = p.read(name, 'report.md');
    expect(
      report.startsWith(`# scout report: ${name}\n\n## Summary\n\nx is in src/app.ts.\n\n## Evidence`),
    ).toBe(true);
    expect(report).toContain('## Run');
    const shown = JSON.parse((await p.agentbox(['show', name, '--json'])).stdout);
    expect(shown.state.output).toEqual({
      template: 'prompt/output.md',
      applied: true,
      violations: 1,
      corrections: 1,
      verified: null,
    });
  });

  it('a template changed on disk while a run works does not apply to that run', async () => {
    const task = 'TASK-CHANGED-MIDWAY where is z?';
    const file = path.join(p.repo.dir, '.agentbox', 'templates', 'scout.output.md');
    p.server.setRules([
      {
        when: { anyText: task },
        reply: () => {
          // While the run works, the template starts to require a section the answer lacks.
          fs.writeFileSync(file, CONTRACT.replace('[Summary, Evidence]', '[Summary, Evidence, Risks]'));
          return text('## Summary\nz is in src/app.ts.\n\n## Evidence\nsrc/app.ts:1');
        },
      },
    ]);
    try {
      const result = await p.agentbox(['scout', task]);
      expect(result.code, result.stderr).toBe(0);
      const name = p.newest();
      expect(p.state(name).status).toBe('DONE');
      expect(p.events(name).filter((e) => e.event === 'violation')).toEqual([]);
      expect(p.read(name, 'prompt/output.md')).not.toContain('Risks');
    } finally {
      fs.writeFileSync(file, CONTRACT);
    }
  });

  it('an agent that never complies ends with "Supervisor violation: missing_section", its report kept', async () => {
    const task = 'TASK-NEVER where is y?';
    p.server.setRules([{ when: { anyText: task }, reply: text('## Summary\nNo idea.') }]);
    const result = await p.agentbox(['scout', task]);
    expect(result.code).toBe(1);
    const name = p.newest();
    const state = p.state(name);
    expect(state.status).toBe('ABORTED');
    expect(state.failure).toMatchObject({
      kind: 'violation',
      message: 'Supervisor violation: missing_section',
    });
    const actions = p
      .events(name)
      .filter((e) => e.event === 'violation')
      .map((e) => e.action);
    expect(actions).toEqual(['correct', 'correct', 'fail']);
    expect(p.read(name, 'report.md')).toContain('Supervisor violation: missing_section');
    expect(p.read(name, 'raw/answer.md')).toContain('No idea.');
  });

  it('a failing runs.verify is corrected, then ends the run with "Supervisor violation: verify_failed"', async () => {
    config('runs:\n  verify: sh test.sh\n');
    const task = 'TASK-VERIFY-FAILS set x';
    p.server.setRules(setX(task, 2, 'Done, and I verified it.'));
    const from = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code).toBe(1);
    const name = p.newest();
    const state = p.state(name);
    expect(state.status).toBe('ABORTED');
    expect(state.failure.message).toBe('Supervisor violation: verify_failed');
    // The agent was told what failed, with the command's output.
    const feedback = p.server.requests
      .slice(from)
      .map((r) => r.view)
      .find(corrected)!.lastUserText;
    expect(feedback).toContain('`sh test.sh` failed (exit code 1)');
    expect(feedback).toContain('x is not 42');
    expect(
      p
        .events(name)
        .filter((e) => e.event === 'verify')
        .map((e) => e.ok),
    ).toEqual([false, false, false]);
    // The patch and the report are kept for the person; the report has the output excerpt.
    expect(p.read(name, 'changes.patch')).toContain('export const x = 2;');
    expect(p.read(name, 'report.md')).toContain('verification: FAILED');
    expect(p.read(name, 'report.md')).toContain('x is not 42');
    expect(p.read(name, 'raw/verify-1.log')).toContain('x is not 42');
  });

  it('a passing runs.verify lets the run reach REVIEW', async () => {
    const task = 'TASK-VERIFY-PASSES set x';
    p.server.setRules(setX(task, 42, 'Set x to 42.'));
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    expect(p.state(name).status).toBe('REVIEW');
    // With how long it took, for the run page's steps (issue 40).
    expect(p.events(name).filter((e) => e.event === 'verify')).toEqual([
      expect.objectContaining({ ok: true, duration_ms: expect.any(Number) }),
    ]);
    expect(p.state(name).output.verified).toBe(true);
  });

  it('runs.verify runs in the run’s sandbox: it cannot write outside the worktree', async () => {
    // Into the main repository's git dir: visible and read-only in the sandbox (the main tree itself
    // is hidden from a fix run, an empty throwaway folder there: test/e2e/read-fence.test.ts).
    config(`runs:\n  verify: sh test.sh && echo pwned > ${root}/.git/verify-escaped.txt\n`);
    const task = 'TASK-VERIFY-BOXED set x';
    p.server.setRules(setX(task, 42, 'Set x to 42.'));
    await p.agentbox(['fix', task]);
    const name = p.newest();
    expect(fs.existsSync(path.join(root, '.git', 'verify-escaped.txt'))).toBe(false);
    expect(p.state(name).failure?.message).toBe('Supervisor violation: verify_failed');
    expect(p.read(name, 'raw/verify-1.log')).toMatch(/Read-only file system/);
    config('');
  });

  it('a direct execution attempt is refused and recorded', async () => {
    const task = 'TASK-DIRECT do it yourself';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: bash('claude -p "write the code for me"') },
      {
        when: { anyText: task, turn: 1 },
        reply: (r: RequestView) =>
          tool('Write', {
            file_path: path.join(r.workingDirectory!, '.claude', 'settings.json'),
            content: '{"hooks":{}}\n',
          }),
      },
      {
        when: { anyText: task, turn: 2 },
        reply: bash('mkdir -p .agentbox/templates && echo "{}" > .agentbox/templates/input.md'),
      },
      { when: { anyText: task }, reply: text('I could not.') },
    ]);
    const from = p.server.requests.length;
    const result = await p.agentbox(['fix', task]);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    const results = p.server.requests
      .slice(from)
      .map((r) => r.view.toolResults[0])
      .filter(Boolean);
    expect(results.slice(0, 3).every((r) => r!.isError)).toBe(true);
    expect(results[0]!.content).toContain('a run may not call Claude Code or a model API itself');
    const direct = p.events(name).filter((e) => e.event === 'violation' && e.type === 'direct_execution');
    expect(direct.length).toBeGreaterThanOrEqual(3);
    expect(direct.map((e) => e.action)).toEqual(direct.map(() => 'refused'));
    expect(p.read(name, 'report.md')).toContain('## Refused actions');
  });

  describe('the supervisor settings reach a real run', () => {
    /** A scout whose every answer lacks `## Evidence`: a missing_section at every Stop. */
    const lacking = (task: string) => {
      p.server.setRules([{ when: { anyText: task }, reply: text('## Summary\nx is in src/app.ts.') }]);
    };
    const violations = (name: string) => p.events(name).filter((e) => e.event === 'violation');
    const shown = async (name: string) => JSON.parse((await p.agentbox(['show', name, '--json'])).stdout);

    it('supervisor.fail_on_violation: true ends the run at the first violation, with no correction', async () => {
      config('supervisor:\n  fail_on_violation: true\n');
      const task = 'TASK-FAIL-ON-VIOLATION where is x?';
      lacking(task);
      const from = p.server.requests.length;
      const result = await p.agentbox(['scout', task]);
      expect(result.code).toBe(1);
      const name = p.newest();
      expect(p.state(name)).toMatchObject({
        status: 'ABORTED',
        failure: { kind: 'violation', message: 'Supervisor violation: missing_section' },
      });
      expect(violations(name).map((e) => e.action)).toEqual(['fail']);
      expect(p.server.requests.slice(from).some((r) => corrected(r.view))).toBe(false);
    });

    it('supervisor.enabled: false checks and logs the answer, never enforces it', async () => {
      config('supervisor:\n  enabled: false\n');
      const task = 'TASK-NOT-ENFORCED where is x?';
      lacking(task);
      const from = p.server.requests.length;
      const result = await p.agentbox(['scout', task]);
      expect(result.code, result.stderr).toBe(0);
      const name = p.newest();
      expect(p.state(name)).toMatchObject({ status: 'DONE', failure: null });
      expect(violations(name)).toEqual([
        expect.objectContaining({ type: 'missing_section', detail: '## Evidence', action: 'logged' }),
      ]);
      expect(p.server.requests.slice(from).some((r) => corrected(r.view))).toBe(false);
    });

    it('supervisor.require_format_validation: false does not check the answer; timeout_profile sets the run timeout', async () => {
      config('supervisor:\n  require_format_validation: false\n  timeout_profile: long\n');
      const task = 'TASK-NO-FORMAT-CHECK where is x?';
      lacking(task);
      const result = await p.agentbox(['scout', task]);
      expect(result.code, result.stderr).toBe(0);
      const name = p.newest();
      expect(p.state(name).status).toBe('DONE');
      expect(violations(name)).toEqual([]);
      // The run recorded the profile's timeout (long: 2h) as the one it runs under.
      expect((await shown(name)).meta.options.timeout_ms).toBe(2 * 3_600_000);
      config('supervisor:\n  timeout_profile: extended\n');
      const extended = 'TASK-EXTENDED where is x?';
      p.server.setRules([
        { when: { anyText: extended }, reply: text('## Summary\nhere\n\n## Evidence\nsrc/app.ts:1') },
      ]);
      expect((await p.agentbox(['scout', extended])).code).toBe(0);
      expect((await shown(p.newest())).meta.options.timeout_ms).toBe(6 * 3_600_000);
    });

    it('the recorded timeout is enforced: a run still going after it is stopped, CRASHED, kind "timeout"', async () => {
      config('runs:\n  timeout: 3s\n');
      const task = 'TASK-TIMES-OUT where is x?';
      p.server.setRules([{ when: { anyText: task }, reply: hang() }]);
      const started = Date.now();
      const result = await p.agentbox(['scout', task]);
      expect(result.code).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      const name = p.newest();
      expect((await shown(name)).meta.options.timeout_ms).toBe(3000);
      expect(p.state(name)).toMatchObject({
        status: 'CRASHED',
        failure: { kind: 'timeout', message: 'still running after 3s' },
      });
      config('');
    }, 60_000);
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
