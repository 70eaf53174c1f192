import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { directExecution } from '../../src/airlock/direct.js';
import { judgeViolations } from '../../src/supervisor/violations.js';
import {
  checkVariables,
  composePrompt,
  fillVariables,
  MAX_FILLED,
  TEMPLATE_VARIABLES,
  type TemplateValues,
  TemplateVariableError,
} from '../../src/templates/compose.js';
import {
  checkAnswer,
  contractSchema,
  correctionText,
  DEFAULT_ACTIONS,
  formatAnswer,
  type OutputContract,
  toContract,
} from '../../src/templates/contract.js';
import { loadRunTemplates, readTemplate } from '../../src/templates/load.js';
import { BUILTIN_DIR, levelFile, locateTemplates } from '../../src/templates/locate.js';
import { splitSections } from '../../src/templates/sections.js';
import { runUnprivileged } from '../helpers/unprivileged.js';

const VALUES: TemplateValues = {
  task: 'fix the bug',
  run: '26-01-01_0000__fix-the-bug__abc123',
  run_id: 'abc123',
  type: 'fix',
  branch: 'agentbox/26-01-01_0000__fix-the-bug__abc123',
  repo: '/repo/app',
  repo_name: 'app',
  worktree: '/wt',
  base: '0123456789abcdef0123456789abcdef01234567',
  date: '2026-01-01',
  attempt: '1',
  attempts: '1',
  review: 'rename x',
  revision: '2',
};

describe('composePrompt (SUP-2): global, project, task — in that order, always', () => {
  it.each([
    ['all three', 'G', 'P', 'T'],
    ['empty templates keep their place', '', '', 'T'],
    ['an empty global only', '', 'P', 'T'],
    ['templates that try to look like a later part', '<!-- agentbox: project template -->', 'x', 'T'],
  ])('%s', (_label, g, p, t) => {
    const { composed } = composePrompt({ type: 'fix', globalTemplate: g, projectTemplate: p, userPrompt: t });
    const at = (marker: string) => composed.lastIndexOf(marker);
    const globalAt = composed.indexOf('<!-- agentbox: global template -->');
    expect(globalAt).toBe(0);
    expect(at('<!-- agentbox: project template -->')).toBeGreaterThan(globalAt);
    expect(at('<!-- agentbox: fix task (verbatim from the user) -->')).toBeGreaterThan(
      at('<!-- agentbox: project template -->'),
    );
    expect(composed.endsWith(`${t}\n`)).toBe(true);
  });

  it('keeps the task verbatim (spaces, a leading slash, {{variables}}) and puts the output shape last', () => {
    const task = '  /merge {{task}}\n--- not front matter\n';
    const c = composePrompt({
      type: 'scout',
      globalTemplate: 'G',
      projectTemplate: 'P',
      userPrompt: task,
      outputShape: '## Summary',
    });
    expect(c.composed).toContain(`-->\n${task}\n\n<!-- agentbox: the shape of your final answer -->`);
    expect(c.composed.trimEnd().endsWith('## Summary')).toBe(true);
    expect(c.userPrompt).toBe(task);
  });
});

describe('template variables', () => {
  it('fills every documented variable', () => {
    const text = TEMPLATE_VARIABLES.map((v) => `{{${v}}}|{{ ${v} }}`).join('\n');
    const filled = fillVariables(text, VALUES);
    for (const v of TEMPLATE_VARIABLES) expect(filled).toContain(`${VALUES[v]}|${VALUES[v]}`);
  });

  it.each([
    ['a typo, with a suggestion', 'line 1\n{{ branh }}', 'branh', 2, 'branch'],
    ['an unknown name', '{{secret}}', 'secret', 1, undefined],
    ['an empty one', 'a {{}} b', '', 1, undefined],
  ])('refuses %s', (_label, text, variable, line, suggestion) => {
    try {
      checkVariables(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateVariableError);
      expect(error).toMatchObject({ variable, line, suggestion });
    }
  });

  it('refuses a template that fills past what Claude Code takes, before building it (a 1 MB one of {{task}} made 262 MB)', () => {
    const big = { ...VALUES, task: 'x'.repeat(2000) };
    expect(() => fillVariables('{{task}}'.repeat(131_000), big)).toThrow(
      /a template fills to more than 8 MB with this task \(its \{\{task\}\} repeated\)/,
    );
    expect(fillVariables('{{task}}'.repeat(4000), big)).toHaveLength(8_000_000);
    expect(MAX_FILLED).toBe(8 * 1024 * 1024);
  });

  it('reads \\{{ as a literal {{', () => {
    expect(fillVariables('use \\{{task}} for the task: {{task}}', VALUES)).toBe(
      'use {{task}} for the task: fix the bug',
    );
  });
});

const CONTRACT: OutputContract = {
  requiredSections: ['Summary', 'Verification'],
  actions: DEFAULT_ACTIONS,
  body: '# fix report: {{run}}\n\n## Summary\nwhat\n\n## Verification\nhow\n',
};

describe('the output contract (SUP-3, SUP-7)', () => {
  it.each([
    ['a complete answer', '## Summary\nDone.\n\n## Verification\nnpm test: 3 passed', []],
    ['headings compared loosely', '### summary:\nDone.\n## VERIFICATION\nran it', []],
    ['nested sub-headings count as content', '## Summary\n### a.ts\nx\n## Verification\nok', []],
    ['a missing section', '## Summary\nDone.', [{ type: 'missing_section', detail: '## Verification' }]],
    [
      'an empty section',
      '## Summary\n\n## Verification\nok',
      [{ type: 'bad_format', detail: '## Summary is empty' }],
    ],
    [
      'a heading inside a code fence is no heading',
      '## Summary\nx\n```\n## Verification\n```',
      [{ type: 'missing_section', detail: '## Verification' }],
    ],
    ['an empty answer', '  \n', [{ type: 'bad_format', detail: 'the final answer is empty' }]],
  ])('%s', async (_label, answer, expected) => {
    expect(await checkAnswer(CONTRACT, answer)).toEqual(expected);
  });

  it('tells the agent exactly what to add', () => {
    const text = correctionText(
      [{ type: 'missing_section', detail: '## Verification' }],
      ['Summary', 'Verification'],
    );
    expect(text).toContain(
      'your final answer lacks the section `## Verification`; add it.'.replace('your', 'Your'),
    );
    expect(text).toContain('with the sections ## Summary, ## Verification');
  });

  it('formats the answer by the template: its title, its order, then the agent’s other sections', async () => {
    const answer = 'Intro line.\n\n## Notes\nextra\n\n## Verification\nnpm test ok\n\n## Summary\nChanged x.';
    expect(await formatAnswer(CONTRACT, answer, VALUES)).toBe(
      `${[
        '# fix report: 26-01-01_0000__fix-the-bug__abc123',
        'Intro line.',
        '## Summary',
        'Changed x.',
        '## Verification',
        'npm test ok',
        '## Notes',
        'extra',
      ].join('\n\n')}\n`,
    );
  });

  it('says so where the agent gave a section nothing', async () => {
    expect(await formatAnswer(CONTRACT, '## Summary\nonly this', VALUES)).toContain(
      '## Verification\n\n_(not given)_',
    );
  });

  it('splits sections by a Markdown lexer, nested ones inside their parents', async () => {
    const { preamble, sections } = await splitSections('pre\n# T\n## A\na\n### A1\nx\n## B\nb\n');
    expect(preamble).toBe('pre');
    expect(sections.map((s) => [s.depth, s.title])).toEqual([
      [1, 'T'],
      [2, 'A'],
      [3, 'A1'],
      [2, 'B'],
    ]);
    expect(sections[1]!.body).toBe('a\n### A1\nx');
  });
});

describe('a failing runs.verify is verify_failed; a template may still call it skipped_validation (issue 38 item 6)', () => {
  const actionOf = (violations: Record<string, string> | undefined) => {
    const parsed = contractSchema.safeParse({ required_sections: ['Summary'], violations });
    return parsed.success
      ? toContract(parsed.data, '').actions.verify_failed
      : parsed.error.issues[0]!.message;
  };
  it.each([
    ['nothing said: corrected', undefined, 'correct'],
    ['verify_failed: fail', { verify_failed: 'fail' }, 'fail'],
    ['the seed’s name, skipped_validation: fail, means the same', { skipped_validation: 'fail' }, 'fail'],
    ['both, agreeing', { verify_failed: 'fail', skipped_validation: 'fail' }, 'fail'],
    ['another type’s action leaves it alone', { missing_section: 'fail' }, 'correct'],
    [
      'both, disagreeing: an error, not a silent pick',
      { verify_failed: 'correct', skipped_validation: 'fail' },
      expect.stringContaining('verify_failed and skipped_validation name the same violation'),
    ],
  ])('%s', (_label, violations, expected) => {
    expect(actionOf(violations)).toEqual(expected);
  });

  it('the correction tells the agent its verification failed', () => {
    const text = correctionText([{ type: 'verify_failed', detail: '`npm test` failed (exit code 1)' }], []);
    expect(text).toContain("The project's verification failed: `npm test` failed (exit code 1)");
  });
});

describe('judgeViolations: corrected while corrections remain, then the run fails', () => {
  const checks = { actions: DEFAULT_ACTIONS, maxCorrections: 2, failOnViolation: false, enforce: true };
  const missing = [{ type: 'missing_section' as const, detail: '## X' }];
  it.each([
    ['first time', checks, 0, { kind: 'correct' }],
    ['second time', checks, 1, { kind: 'correct' }],
    ['corrections used up', checks, 2, { kind: 'fail', type: 'missing_section' }],
    [
      'no corrections allowed',
      { ...checks, maxCorrections: 0 },
      0,
      { kind: 'fail', type: 'missing_section' },
    ],
    ['fail_on_violation', { ...checks, failOnViolation: true }, 0, { kind: 'fail', type: 'missing_section' }],
    [
      'configured major',
      { ...checks, actions: { ...DEFAULT_ACTIONS, missing_section: 'fail' as const } },
      0,
      { kind: 'fail', type: 'missing_section' },
    ],
    ['not enforced (supervisor.enabled: false)', { ...checks, enforce: false }, 5, { kind: 'logged' }],
  ])('%s', (_label, c, so, expected) => {
    expect(judgeViolations(c, missing, so)).toEqual(expected);
  });
});

describe('directExecution: the agent calling a model itself, or changing agentbox’s files', () => {
  it.each([
    ['Bash', { command: 'claude -p hi' }, false, true],
    ['Bash', { command: 'echo x | /usr/local/bin/claude --print' }, false, true],
    ['Bash', { command: 'npx @anthropic-ai/claude-code -p x' }, false, true],
    ['Bash', { command: 'curl https://api.anthropic.com/v1/messages' }, false, true],
    ['Bash', { command: 'ANTHROPIC_BASE_URL=http://x node app.js' }, false, true],
    ['Bash', { command: 'cat /tmp/agentbox-claude-home/x.txt' }, false, false],
    ['Bash', { command: 'ls .claude/commands' }, false, false],
    ['Bash', { command: 'echo {} > .claude/settings.json' }, true, true],
    ['Write', { file_path: '/wt/.claude/settings.json' }, true, true],
    ['Edit', { file_path: '.agentbox/templates/input.md' }, true, true],
    ['Write', { file_path: '/wt/src/claude.ts' }, true, false],
    ['Write', { file_path: '/wt/.claude/settings.json' }, false, false],
  ])('%s %j (refused: %s) → %s', (tool, input, refused, expected) => {
    expect(directExecution(tool, input, '/wt', refused) !== null).toBe(expected);
  });
});

describe('where templates come from', () => {
  const dirs: string[] = [];
  const temp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-templates-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a type’s file replaces the generic one at the same level; the global level falls back to the package', () => {
    const global = temp();
    const project = temp();
    fs.writeFileSync(path.join(project, 'input.md'), 'P');
    fs.writeFileSync(path.join(project, 'fix.input.md'), 'PF');
    expect(levelFile(project, 'input', 'fix')).toBe(path.join(project, 'fix.input.md'));
    expect(levelFile(project, 'input', 'scout')).toBe(path.join(project, 'input.md'));
    const found = locateTemplates({ global, project }, 'scout', { builtinOutput: false });
    expect(found.globalInput).toBe(path.join(BUILTIN_DIR, 'scout.input.md'));
    fs.writeFileSync(path.join(global, 'input.md'), '');
    expect(locateTemplates({ global, project }, 'scout', { builtinOutput: false }).globalInput).toBe(
      path.join(global, 'input.md'),
    );
    expect(found.output).toBeNull();
    expect(locateTemplates({ global, project }, 'fix', { builtinOutput: true }).output).toBe(
      path.join(BUILTIN_DIR, 'fix.output.md'),
    );
  });

  it('every shipped template reads, and its output contract is valid', () => {
    for (const name of fs.readdirSync(BUILTIN_DIR).filter((f) => f.endsWith('.md'))) {
      const t = readTemplate(path.join(BUILTIN_DIR, name));
      expect(t.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    const all = loadRunTemplates({ global: null, project: temp() }, 'fix', { builtinOutput: true });
    expect(all.output?.contract.requiredSections).toEqual(['Summary', 'Changes', 'Verification']);
  });

  it.each([
    [
      'an unknown variable',
      'hello {{brnch}}',
      /unknown variable \{\{brnch\}\} on line 4.*did you mean \{\{branch\}\}/s,
    ],
    // (the parser's place, as the file's line, and no colon left hanging where its code frame was cut)
    [
      'invalid YAML front matter',
      '---\nrequired_sections: [a\n---\nx',
      /front matter is not valid YAML: .*end with a \] \(line 2, column \d+\) fix the block/,
    ],
    ['a front matter that is a list', '---\n- a\n---\nx', /not a mapping/],
  ])('names the file and the problem: %s', (_label, text, message) => {
    const dir = temp();
    const file = path.join(dir, 'input.md');
    fs.writeFileSync(file, text.startsWith('---') ? text : `---\nx: 1\n---\n${text}`);
    try {
      readTemplate(file);
      expect.unreachable();
    } catch (error) {
      const e = error as { code: string; message: string; hint?: string };
      expect(e.code).toBe('TEMPLATE_INVALID');
      expect(`${e.message} ${e.hint}`).toMatch(message);
      expect(e.message).toContain(file);
    }
  });

  // A project template is a file in the repository (.agentbox/templates/): one a cloned repository
  // or a merged change brings. gray-matter runs a `---js` front matter through eval, in agentbox's
  // own process, outside every sandbox: it must never get that far.
  it.each(['---js', '---javascript', '--- JS', '---Javascript  '])(
    'never runs a front matter in JavaScript (%s): refused, nothing ran',
    (opening) => {
      const dir = temp();
      const mark = path.join(dir, 'ran');
      const file = path.join(dir, 'scout.input.md');
      const code = `({ x: require('fs').writeFileSync(${JSON.stringify(mark)}, 'ran') })`;
      fs.writeFileSync(file, `${opening}\n${code}\n---\n{{task}}\n`);
      expect(() => readTemplate(file)).toThrow(/front matter .*YAML/);
      expect(fs.existsSync(mark)).toBe(false);
    },
  );

  it('refuses an output template without required_sections, or with an unknown key', () => {
    const project = temp();
    fs.writeFileSync(path.join(project, 'output.md'), '---\nrequired_section: [A]\n---\n## A\n');
    expect(() => loadRunTemplates({ global: null, project }, 'scout', { builtinOutput: false })).toThrow(
      /output\.md: front matter/,
    );
  });

  it('refuses an unreadable template', async () => {
    // NOTE: root reads a file whatever its mode: the read runs in a process of its own as a user
    // without root's powers (nobody when the tests run as root, else the tests' own user), in a
    // folder that user may enter, so what fails is the file's mode.
    const project = temp();
    fs.chmodSync(project, 0o755);
    const file = path.join(project, 'input.md');
    fs.writeFileSync(file, 'x', { mode: 0o000 });
    const said = await runUnprivileged(`import { readTemplate } from '@src/templates/load.ts';
      try { readTemplate(${JSON.stringify(file)}); console.log('read'); } catch (e) { console.log(e.message); }`);
    expect(said).toMatch(/input\.md.*cannot be read \(EACCES\)/);
    // The same file readable: the same process reads it.
    fs.chmodSync(file, 0o644);
    expect(
      await runUnprivileged(`import { readTemplate } from '@src/templates/load.ts';
      console.log(readTemplate(${JSON.stringify(file)}).body);`),
    ).toBe('x\n');
  });
});
