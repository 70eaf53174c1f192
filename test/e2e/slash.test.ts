import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClaudeArgs, type ClaudeLaunch } from '../../src/claude/args.js';
import { buildAgentEnv } from '../../src/claude/env.js';
import {
  type RunCommandsSpec,
  removeRunCommands,
  skillRules,
  slashName,
  writeRunCommands,
} from '../../src/slash/index.js';
import {
  type ModelServer,
  type RequestView,
  type Rule,
  scriptByTurn,
  startModelServer,
  text,
  tool,
} from '../fixtures/model-server/index.js';
import { type ClaudeHome, claudeEnv, claudeHome, runClaude } from '../helpers/claude.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

// Run-scoped commands as the real Claude Code sees them: listed, offered to the model (safe ones
// only), refused to the model (human-only ones), and the grants their frontmatter carries.
describe('run-scoped slash commands in the real Claude Code', () => {
  const tag = newTestTag();
  let server: ModelServer;
  let home: ClaudeHome;
  let repo: TestRepo;
  let worktree: string;

  beforeAll(async () => {
    server = await startModelServer([]);
    home = claudeHome();
    repo = gitRepo({ files: { 'src/app.txt': 'v1\n' } });
    worktree = path.join(tempDir('agentbox-wt-'), 'tree');
    repo.git('worktree', 'add', '--quiet', '-b', 'agentbox/fix', worktree);
  });

  afterAll(async () => {
    killTagged(tag);
    await server?.close();
    if (worktree) fs.rmSync(path.dirname(worktree), { recursive: true, force: true });
  });

  const spec = (type: RunCommandsSpec['type'], runId: string, wt: string | null = null): RunCommandsSpec => {
    const runName = `25-11-22_1430__e2e__${runId}`;
    const runDir = path.join(repo.dir, '.agents', 'runs', runName);
    fs.mkdirSync(runDir, { recursive: true });
    return { runId, runName, type, runDir, worktree: wt };
  };

  async function claude(cwd: string, rules: Rule[], launch: Partial<ClaudeLaunch> & { prompt: string }) {
    server.setRules(rules);
    const start = server.requests.length;
    const args = buildClaudeArgs({
      sessionId: randomUUID(),
      tools: ['Read', 'Write', 'Edit', 'Bash', 'Skill'],
      allowedTools: [],
      ...launch,
    });
    const parent = claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } });
    const result = await runClaude(args, { cwd, env: buildAgentEnv(parent, { cwd }) });
    expect(result.code, result.stderr).toBe(0);
    return { ...result, requests: server.requests.slice(start).map((r) => r.view) };
  }

  /** The "- name: description" lines Claude Code lists under the Skill tool. */
  function skillList(view: RequestView): string[] {
    const all = `${view.system}\n${view.allText}`;
    const start = all.indexOf('The following skills are available for use with the Skill tool:');
    expect(start).toBeGreaterThanOrEqual(0);
    const lines = all.slice(start).split('\n').slice(1);
    const list: string[] = [];
    for (const line of lines) {
      if (line.startsWith('- ')) list.push(line.slice(2));
      else if (list.length > 0 && line.trim() === '') break;
    }
    return list;
  }

  it('lists two runs side by side, offers only the safe ones to the model, refuses a human-only one', async () => {
    const scout = spec('scout', 'a1b2c3');
    const plan = spec('plan', 'd4e5f6');
    writeRunCommands(repo.dir, scout);
    writeRunCommands(repo.dir, plan);
    const merge = slashName('a1b2c3', 'merge_a1b2c3');

    const result = await claude(
      repo.dir,
      scriptByTurn([tool('Skill', { skill: merge }), text('understood')]),
      {
        prompt: 'hello',
        // Even an explicit allow rule does not let the model run a human-only command.
        allowedTools: [...skillRules('scout', 'a1b2c3'), `Skill(${merge})`],
      },
    );

    const init = result.events[0];
    expect(init).toMatchObject({ type: 'system', subtype: 'init' });
    const runCommands = (init.slash_commands as string[]).filter((c) => c.startsWith('run_')).sort();
    // A person can type every one of them, human-only included.
    expect(runCommands).toEqual([
      'run_a1b2c3:apply_a1b2c3',
      'run_a1b2c3:merge_a1b2c3',
      'run_a1b2c3:report_a1b2c3',
      'run_a1b2c3:scout_a1b2c3',
      'run_d4e5f6:apply_d4e5f6',
      'run_d4e5f6:merge_d4e5f6',
      'run_d4e5f6:plan_d4e5f6',
      'run_d4e5f6:report_d4e5f6',
    ]);

    const [first, second] = result.requests;
    const offered = skillList(first!).filter((line) => line.startsWith('run_'));
    expect(offered.sort()).toEqual([
      'run_a1b2c3:report_a1b2c3: Write the final report of run a1b2c3',
      'run_a1b2c3:scout_a1b2c3: Read-only investigation for run a1b2c3',
      'run_d4e5f6:plan_d4e5f6: Write the plan for run d4e5f6',
      'run_d4e5f6:report_d4e5f6: Write the final report of run d4e5f6',
    ]);
    const everything = `${first!.system}\n${first!.allText}`;
    for (const hidden of ['merge_a1b2c3', 'apply_a1b2c3', 'merge_d4e5f6', 'apply_d4e5f6']) {
      expect(everything).not.toContain(hidden);
    }

    expect(second!.toolResults).toHaveLength(1);
    expect(second!.toolResults[0]).toMatchObject({ isError: true });
    expect(second!.toolResults[0]!.content).toContain(
      `Skill ${merge} cannot be used with Skill tool due to disable-model-invocation`,
    );
    await expectNoProcessesLeft(tag);

    // Garbage-collected commands are gone from the next session.
    expect(removeRunCommands(repo.dir, 'a1b2c3')).toBe(true);
    const after = await claude(repo.dir, [{ reply: text('ok') }], { prompt: 'hello again' });
    const left = (after.events[0].slash_commands as string[]).filter((c) => c.startsWith('run_'));
    expect(left.sort()).toEqual([
      'run_d4e5f6:apply_d4e5f6',
      'run_d4e5f6:merge_d4e5f6',
      'run_d4e5f6:plan_d4e5f6',
      'run_d4e5f6:report_d4e5f6',
    ]);
    removeRunCommands(repo.dir, 'd4e5f6');
    await expectNoProcessesLeft(tag);
  });

  it("runs a safe command's grants: edits in the worktree and the run's report, nothing else", async () => {
    const fix = spec('fix', '0f1e2d', worktree);
    writeRunCommands(worktree, fix);
    const inTree = path.join(worktree, 'src', 'app.txt');
    const report = path.join(fix.runDir, 'report.md');
    const state = path.join(fix.runDir, 'state.json');
    const rootFile = path.join(repo.dir, 'escaped.md');
    const write = (file: string) => tool('Write', { file_path: file, content: `written by the agent\n` });

    const result = await claude(
      worktree,
      scriptByTurn([
        tool('Skill', { skill: slashName('0f1e2d', 'fix_0f1e2d'), args: 'focus on app.txt' }),
        write(inTree),
        write(report),
        write(state),
        write(rootFile),
        text('done'),
      ]),
      { prompt: 'fix it', allowedTools: skillRules('fix', '0f1e2d') },
    );

    const results = result.requests.slice(1).map((r) => r.toolResults[0]);
    expect(results.map((r) => r?.isError)).toEqual([false, false, false, true, true]);
    expect(results[0]!.content).toBe('Launching skill: run_0f1e2d:fix_0f1e2d');
    // The command's body reached the model with the run's paths and the arguments in place.
    const body = result.requests[1]!.lastUserText;
    expect(body).toContain(`WORKTREE: ${worktree}`);
    expect(body).toContain(`RUN_DIR: ${fix.runDir}`);
    expect(body).toContain('Focus: focus on app.txt');
    expect(fs.readFileSync(inTree, 'utf8')).toBe('written by the agent\n');
    expect(fs.readFileSync(report, 'utf8')).toBe('written by the agent\n');
    expect(fs.existsSync(state)).toBe(false);
    expect(fs.existsSync(rootFile)).toBe(false);
    expect(removeRunCommands(worktree, '0f1e2d')).toBe(true);
    await expectNoProcessesLeft(tag);
  });

  it('lets a person run a human-only command, which tells them to use agentbox merge', async () => {
    const scout = spec('scout', 'abcdef');
    writeRunCommands(repo.dir, scout);
    const result = await claude(repo.dir, [{ reply: text('ok') }], {
      prompt: `/${slashName('abcdef', 'merge_abcdef')}`,
    });
    const seen = result.requests[0]!.lastUserText;
    expect(seen).toContain('HUMAN ONLY.');
    expect(seen).toContain(`agentbox merge ${scout.runId}\n`);
    // The frontmatter was parsed, not shown.
    expect(seen).not.toContain('disable-model-invocation');
    removeRunCommands(repo.dir, 'abcdef');
    await expectNoProcessesLeft(tag);
  });
});
