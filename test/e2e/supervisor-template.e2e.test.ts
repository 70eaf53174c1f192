import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { text } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * SUP-2, SUP-4, SUP-5 on the real Claude Code: the prompt is composed of the person's global
 * template, the project's template and the task, in that order; it is recorded with the run;
 * bad templates stop a run before anything is created; a changed template applies to the next run.
 */
describe('prompt templates', () => {
  let p: Project;
  let globalDir: string;
  let projectDir: string;
  const firstRequestOf = (from: number, task: string) =>
    p.server.requests.slice(from).find((r) => r.view.allText.includes(task))!.view;
  beforeAll(async () => {
    p = await project();
    globalDir = path.join(p.home.home, '.config', 'agentbox', 'templates');
    projectDir = path.join(p.repo.dir, '.agentbox', 'templates');
    fs.mkdirSync(globalDir, { recursive: true });
    fs.mkdirSync(projectDir, { recursive: true });
    p.server.setRules([{ when: { anyText: 'TASK-' }, reply: text('answered') }]);
  });
  afterAll(async () => p?.cleanup());

  it('the model sees the global template, then the project template, then the task', async () => {
    fs.writeFileSync(path.join(globalDir, 'input.md'), 'GLOBAL-RULE for {{type}} run {{run_id}}\n');
    fs.writeFileSync(
      path.join(projectDir, 'scout.input.md'),
      '---\nnote: project\n---\nPROJECT-RULE in {{repo_name}}\n',
    );
    const from = p.server.requests.length;
    const result = await p.agentbox(['scout', 'TASK-ORDER what is here?']);
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    const id = name.slice(-6);
    const first = firstRequestOf(from, 'TASK-ORDER').allText;
    const g = first.indexOf(`GLOBAL-RULE for scout run ${id}`);
    const pr = first.indexOf(`PROJECT-RULE in ${path.basename(p.repo.dir)}`);
    const t = first.indexOf('TASK-ORDER what is here?');
    expect(g).toBeGreaterThanOrEqual(0);
    expect(pr).toBeGreaterThan(g);
    expect(t).toBeGreaterThan(pr);

    // Recorded with the run: the composed prompt, its three parts, each template's path and hash.
    const composed = p.read(name, 'prompt.md');
    expect(first).toContain(composed.trim());
    expect(p.read(name, 'prompt/global.md').trimEnd()).toBe(`GLOBAL-RULE for scout run ${id}`);
    expect(p.read(name, 'prompt/project.md').trimEnd()).toBe(`PROJECT-RULE in ${path.basename(p.repo.dir)}`);
    expect(p.read(name, 'prompt/task.md')).toBe('TASK-ORDER what is here?');
    const meta = parseYaml(p.read(name, 'meta.yaml'));
    expect(meta.extra.templates.global_input.path).toBe(path.join(globalDir, 'input.md'));
    expect(meta.extra.templates.project_input.path).toBe(path.join(projectDir, 'scout.input.md'));
    expect(meta.extra.templates.global_input.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(meta.extra.templates.output).toBeNull();
  });

  it('a changed template applies to the next run only, and resume notices the change', async () => {
    const file = path.join(projectDir, 'scout.input.md');
    fs.writeFileSync(file, 'PROJECT-V1\n');
    expect((await p.agentbox(['scout', 'TASK-V1 first'])).code).toBe(0);
    const first = p.newest();
    fs.writeFileSync(file, 'PROJECT-V2\n');
    const from = p.server.requests.length;
    expect((await p.agentbox(['scout', 'TASK-V2 second'])).code).toBe(0);
    expect(firstRequestOf(from, 'TASK-V2').allText).toContain('PROJECT-V2');
    expect(firstRequestOf(from, 'TASK-V2').allText).not.toContain('PROJECT-V1');
    expect(p.read(first, 'prompt/project.md').trimEnd()).toBe('PROJECT-V1');
    // The first run's envelope recorded V1: config_hash tells resume the templates changed.
    const state = path.join(p.runDir(first), 'state.json');
    fs.writeFileSync(state, JSON.stringify({ ...p.state(first), status: 'ABORTED' }));
    const resumed = await p.agentbox(['resume', first]);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain('its templates changed');
  });

  it.each([
    [
      'an unknown variable',
      'input.md',
      'Hello {{tsak_name}}\n',
      /unknown variable \{\{tsak_name\}\} on line 1/,
    ],
    ['invalid front matter', 'input.md', '---\na: [b\n---\nx\n', /front matter is not valid YAML/],
    [
      'an output template without required_sections',
      'output.md',
      '---\nrequired: [A]\n---\n## A\n',
      /output\.md: front matter/,
    ],
  ])('%s is a clear error, and nothing is created', async (_label, name, content, message) => {
    fs.rmSync(projectDir, { recursive: true, force: true });
    fs.mkdirSync(projectDir, { recursive: true });
    fs.writeFileSync(path.join(projectDir, name), content);
    const before = p.runs();
    const result = await p.agentbox(['scout', 'TASK-BAD never runs']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(path.join(projectDir, name));
    expect(p.runs()).toEqual(before);
    expect(fs.readdirSync(path.join(p.repo.dir, '.agents', 'runs')).length).toBe(before.length);
    fs.rmSync(path.join(projectDir, name));
  });

  it('an unreadable template is a clear error (a folder where the file should be)', async () => {
    fs.mkdirSync(path.join(projectDir, 'plan.input.md'));
    const before = p.runs();
    const result = await p.agentbox(['plan', 'TASK-UNREADABLE']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/plan\.input\.md is not a regular file, so agentbox does not read it/);
    expect(p.runs()).toEqual(before);
    fs.rmdirSync(path.join(projectDir, 'plan.input.md'));
  });

  it('agentbox templates lists the sources; templates show prints the prompt without running', async () => {
    fs.writeFileSync(path.join(projectDir, 'fix.input.md'), 'PROJECT-FIX on {{branch}}\n');
    const list = await p.agentbox(['templates', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const json = JSON.parse(list.stdout);
    const fix = json.types.find((t: { type: string }) => t.type === 'fix');
    expect(fix.project_input).toBe(path.join(projectDir, 'fix.input.md'));
    expect(fix.global_input).toBe(path.join(globalDir, 'input.md'));
    const plain = await p.agentbox(['templates']);
    expect(plain.stdout).toContain('.agentbox/templates/fix.input.md');
    const before = p.runs();
    const shown = await p.agentbox(['templates', 'show', 'fix', 'TASK-SHOW']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('PROJECT-FIX on agentbox/<run>');
    expect(shown.stdout.indexOf('GLOBAL-RULE')).toBeLessThan(shown.stdout.indexOf('PROJECT-FIX'));
    expect(shown.stdout.trimEnd().endsWith('TASK-SHOW')).toBe(true);
    expect(p.runs()).toEqual(before);
  });

  it('a task that starts with "-" says to use --; after -- it works; a 127 KB task reaches the model (its prompt is over the 128 KiB argv limit)', async () => {
    const dash = await p.agentbox(['scout', '-x is broken']);
    expect(dash.code).toBe(2);
    expect(dash.stderr).toContain('a task that starts with "-" goes after --: agentbox scout -- "<task>"');
    const fm = '---\nTASK-DASH: front matter as a task\n---';
    expect((await p.agentbox(['scout', '--', fm])).code).toBe(0);
    expect(p.read(p.newest(), 'prompt/task.md')).toBe(fm);
    // Just under what one argv string may hold (agentbox's own); with the templates, the composed
    // prompt is over it.
    fs.mkdirSync(projectDir, { recursive: true });
    fs.writeFileSync(path.join(projectDir, 'scout.input.md'), `${'project rule. '.repeat(400)}\n`);
    const big = `TASK-BIG ${'x'.repeat(127 * 1024)} END-OF-BIG`;
    const from = p.server.requests.length;
    const result = await p.agentbox(['scout', big]);
    expect(result.code, result.stderr).toBe(0);
    expect(firstRequestOf(from, 'TASK-BIG').allText).toContain('END-OF-BIG');
    expect(Buffer.byteLength(p.read(p.newest(), 'prompt.md'))).toBeGreaterThan(128 * 1024);
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
