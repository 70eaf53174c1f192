import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';

/** The CLI in-process, with a HOME of its own (the global templates' folder). */
async function agentbox(cwd: string, home: string, argv: string[]) {
  const io = memoryIo();
  const code = await run(argv, { cwd, env: { HOME: home }, io });
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Issue 29 §3: `interactive`, which docs/templates.md lists, is listed and shown like the others. */
describe('agentbox templates and templates show: interactive too', () => {
  const repo = gitRepo();
  const home = tempDir();
  const dir = path.join(repo.dir, '.agentbox', 'templates');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'interactive.input.md'), 'PROJECT-INTERACTIVE {{type}} in {{repo_name}}\n');
  // An output template for every type: a person's own session still has no output contract.
  fs.writeFileSync(
    path.join(dir, 'output.md'),
    '---\nrequired_sections: [Summary]\n---\n## Summary\nOUTPUT-SHAPE\n',
  );

  it('lists every run type, interactive last, with its sources and no output contract', async () => {
    const json = await agentbox(repo.dir, home, ['templates', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const types = JSON.parse(json.stdout).types;
    expect(types.map((t: { type: string }) => t.type)).toEqual([
      'scout',
      'plan',
      'fix',
      'review',
      'interactive',
    ]);
    expect(types.at(-1)).toEqual({
      type: 'interactive',
      global_input: expect.stringMatching(/templates\/input\.md$/),
      project_input: path.join(fs.realpathSync(repo.dir), '.agentbox/templates/interactive.input.md'),
      output: null,
      required_sections: [],
    });
    expect(types.find((t: { type: string }) => t.type === 'fix').output).toMatch(
      /\.agentbox\/templates\/output\.md$/,
    );

    const plain = await agentbox(repo.dir, home, ['templates']);
    expect(plain.stdout).toContain(
      [
        '\ninteractive',
        '  input, global:  built-in input.md',
        '  input, project: .agentbox/templates/interactive.input.md',
        '  output:         — (a session of your own has no output contract)',
        '',
      ].join('\n'),
    );
  });

  it('show interactive prints the first message of `agentbox start "<task>"`: the input templates and the task', async () => {
    const shown = await agentbox(repo.dir, home, [
      'templates',
      'show',
      'interactive',
      'TASK-FIRST look around',
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`PROJECT-INTERACTIVE interactive in ${path.basename(repo.dir)}`);
    expect(shown.stdout.trimEnd().endsWith('TASK-FIRST look around')).toBe(true);
    expect(shown.stdout).not.toContain('OUTPUT-SHAPE');
    // The other types still get the output shape after the task.
    const fix = await agentbox(repo.dir, home, ['templates', 'show', 'fix', 'TASK-FIX']);
    expect(fix.stdout).toContain('OUTPUT-SHAPE');
  });

  it('an unknown type names the five', async () => {
    const wrong = await agentbox(repo.dir, home, ['templates', 'show', 'interactiv', 'x']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('unknown run type "interactiv"');
    expect(wrong.stderr).toContain('use one of: scout, plan, fix, review, interactive');
  });
});
