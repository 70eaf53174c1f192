import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text, tool } from '../fixtures/model-server/index.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/*
 * `agentbox rerun <run>` (issue 39) on the real Claude Code against the scripted model: a new run of
 * the same task, its meta.yaml saying `rerun_of`, with today's templates and the options the old
 * run was started with (its model; a limit where stricter than today's; a flag typed now wins), and the old run left exactly as it was.
 */

const TASK = 'make greet() use the name it is given';

describe('agentbox rerun: the same task, anew', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'src/greet.js': 'module.exports = (name) => "hello";\n' } });
    p.server.setRules([
      {
        when: { turn: 0, anyText: TASK },
        reply: (req) =>
          tool('Write', {
            file_path: path.join(req.workingDirectory!, 'src/greet.js'),
            content: 'module.exports = (name) => "hello " + name;\n',
          }),
      },
      { when: { turn: 1, anyText: TASK }, reply: text('greet() now uses the name.') },
    ]);
  });
  afterAll(async () => p?.cleanup());

  it('a rerun of a fix run is a new run with the same task and rerun_of; the old run is unchanged', async () => {
    const first = await p.agentbox(['fix', TASK, '--model', 'model-a', '--max-iterations', '7']);
    expect(first.code).toBe(0);
    const old = p.newest();
    const oldState = p.state(old);
    expect(oldState.status).toBe('REVIEW');
    const oldFolder = snapshotTree(p.runDir(old), { skip: [] });
    const oldWorktree = snapshotTree(oldState.worktree_path, { skip: ['.git'] });
    const oldBranch = p.repo.git('rev-parse', `agentbox/${old}`).trim();

    // Today's templates: the project's fix template changed since the old run.
    p.repo.write('.agentbox/templates/fix.input.md', 'Mention the changelog in your answer.\n');
    p.repo.commit('a project template for fix runs');

    const again = await p.agentbox(['rerun', old.slice(-6), '--max-cost', '3']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    const fresh = p.newest();
    expect(fresh).not.toBe(old);
    expect(again.stdout).toContain(
      `rerun of ${old} (fix), with today's templates and configuration · carried over: model model-a · max iterations 7 (today: 50)\nstarted ${fresh}\n`,
    );
    expect(again.stdout).toContain(`✓ ${fresh} — REVIEW`);

    const meta = p.read(fresh, 'meta.yaml');
    expect(meta).toContain(`rerun_of: ${old}\n`);
    expect(meta).toContain(`task: ${TASK}\n`);
    expect(meta).toContain('type: fix\n');
    expect(meta).toContain('model: model-a\n');
    expect(meta).toMatch(/max_iterations: 7\n/);
    expect(meta).toMatch(/max_cost_usd: 3\n/);
    const state = p.state(fresh);
    expect(state.status).toBe('REVIEW');
    expect(state.branch).toBe(`agentbox/${fresh}`);
    expect(state.worktree_path).not.toBe(oldState.worktree_path);
    expect(p.read(fresh, 'prompt.md')).toContain('Mention the changelog in your answer.');
    expect(p.read(old, 'prompt.md')).not.toContain('Mention the changelog');
    // The model the new session asked for is the one carried over.
    const asked = p.server.requests.filter((r) => r.view.sessionId === state.session_id);
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked.map((r) => r.view.model))).toEqual(new Set(['model-a']));
    expect(fs.readFileSync(path.join(state.worktree_path, 'src/greet.js'), 'utf8')).toContain(
      '"hello " + name',
    );

    // The old run: not a byte of its folder, worktree or branch changed.
    expect(snapshotTree(p.runDir(old), { skip: [] })).toEqual(oldFolder);
    expect(snapshotTree(oldState.worktree_path, { skip: ['.git'] })).toEqual(oldWorktree);
    expect(p.repo.git('rev-parse', `agentbox/${old}`).trim()).toBe(oldBranch);

    const shown = await p.agentbox(['show', fresh.slice(-6)]);
    expect(shown.stdout).toContain(`  rerun of    ${old} (agentbox show ${old.slice(-6)})\n`);
    const json = JSON.parse((await p.agentbox(['show', fresh.slice(-6), '--json'])).stdout);
    expect(json.meta.rerun_of).toBe(old);
  });

  it('a scout reruns as a scout; with --json, stdout is the one JSON document', async () => {
    const question = 'where is greet() defined?';
    p.server.setRules([{ when: { anyText: question }, reply: text('In src/greet.js.') }]);
    expect((await p.agentbox(['scout', question])).code).toBe(0);
    const old = p.newest();
    const again = await p.agentbox(['rerun', old.slice(-6), '--json']);
    expect(again.code).toBe(0);
    const out = JSON.parse(again.stdout);
    const fresh = p.newest();
    expect(fresh).not.toBe(old);
    expect(JSON.stringify(out)).toContain(fresh);
    const meta = p.read(fresh, 'meta.yaml');
    expect(meta).toContain('type: scout\n');
    expect(meta).toContain(`rerun_of: ${old}\n`);
    expect(p.read(fresh, 'report.md')).toContain('In src/greet.js.');
    await expectNoProcessesLeft(p.tag);
  });
});
