import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import matter from 'gray-matter';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { RUN_TYPES, type RunType } from '../../src/ledger/types.js';
import {
  commandNames,
  commandPathProblem,
  HUMAN_ONLY_KINDS,
  listRunCommandDirs,
  type RunCommandsSpec,
  removeRunCommands,
  renderRunCommands,
  SAFE_KINDS,
  skillRules,
  slashName,
  TEMPLATES_DIR,
  templatesDirFor,
  writeRunCommands,
} from '../../src/slash/index.js';
import { tempDir } from '../helpers/git-repo.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN_DIR = '/work/repo/.agents/runs/25-11-22_1430__fix-auth__a1b2c3';
const WORKTREE = '/work/repo/agent_box/trees/25-11-22_1430__fix-auth__a1b2c3';

function spec(type: RunType, overrides: Partial<RunCommandsSpec> = {}): RunCommandsSpec {
  const runId = overrides.runId ?? 'a1b2c3';
  return {
    runId,
    runName: `25-11-22_1430__fix-auth__${runId}`,
    type,
    runDir: RUN_DIR,
    worktree: type === 'fix' ? WORKTREE : null,
    ...overrides,
  };
}

function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (isAgentboxError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AgentboxError, nothing was thrown');
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('commandNames', () => {
  it.each([
    ['scout', ['scout_a1b2c3', 'report_a1b2c3']],
    ['plan', ['plan_a1b2c3', 'report_a1b2c3']],
    ['fix', ['fix_a1b2c3', 'report_a1b2c3']],
    ['review', ['review_a1b2c3', 'report_a1b2c3']],
    ['interactive', ['report_a1b2c3']],
  ] as const)('%s', (type, safe) => {
    expect(commandNames(type, 'a1b2c3')).toEqual({ safe, humanOnly: ['merge_a1b2c3', 'apply_a1b2c3'] });
  });

  it('covers every run type', () => {
    for (const type of RUN_TYPES) expect(commandNames(type, '000000').safe.length).toBeGreaterThan(0);
  });

  it('gives two runs disjoint names', () => {
    const one = commandNames('fix', 'a1b2c3');
    const two = commandNames('fix', 'd4e5f6');
    const all = [...one.safe, ...one.humanOnly, ...two.safe, ...two.humanOnly];
    expect(new Set(all).size).toBe(all.length);
  });

  it('names the Skill rules and slash names of the safe commands only', () => {
    expect(slashName('a1b2c3', 'scout_a1b2c3')).toBe('run_a1b2c3:scout_a1b2c3');
    expect(skillRules('scout', 'a1b2c3')).toEqual([
      'Skill(run_a1b2c3:scout_a1b2c3)',
      'Skill(run_a1b2c3:report_a1b2c3)',
    ]);
  });

  it.each(['A1B2C3', 'a1b2c', 'a1b2c3d', '', '../../x', 'a1b2c3/', 'g1b2c3'])(
    'refuses run id %j',
    (runId) => {
      expect(thrown(() => commandNames('scout', runId)).code).toBe('RUN_NAME_INVALID');
      expect(thrown(() => renderRunCommands(spec('scout', { runId }))).code).toBe('RUN_NAME_INVALID');
      expect(thrown(() => removeRunCommands('/nonexistent', runId)).code).toBe('RUN_NAME_INVALID');
    },
  );
});

describe('renderRunCommands', () => {
  it.each(RUN_TYPES.map((t) => [t]))('%s: safe and human-only frontmatter, parsed back', (type) => {
    const rendered = renderRunCommands(spec(type));
    const names = commandNames(type, 'a1b2c3');
    expect(rendered.map((c) => c.name)).toEqual([...names.safe, ...names.humanOnly]);
    expect(rendered.map((c) => c.file)).toEqual([...names.safe, ...names.humanOnly].map((n) => `${n}.md`));

    for (const command of rendered) {
      const { data, content } = matter(command.content);
      expect(typeof data.description, command.name).toBe('string');
      expect(data.description).toContain('a1b2c3');
      // Descriptions of model-invocable commands share a small budget.
      expect((data.description as string).length).toBeLessThanOrEqual(50);
      expect(typeof data['argument-hint'], command.name).toBe('string');
      if (command.humanOnly) {
        expect(data['disable-model-invocation'], command.name).toBe(true);
        expect(data['allowed-tools'], command.name).toBeUndefined();
        expect(content).toContain('HUMAN ONLY');
        expect(content).toContain('    agentbox merge a1b2c3\n');
      } else {
        expect(data['disable-model-invocation'], command.name).not.toBe(true);
        expect(typeof data['allowed-tools'], command.name).toBe('string');
        expect(content).toContain('$ARGUMENTS');
        expect(content).toContain(`RUN_DIR: ${RUN_DIR}`);
      }
      expect(command.content).not.toContain('{{');
      expect(command.content).not.toContain('}}');
      // Written without the blank line biome puts after the opening `---`.
      expect(command.content.startsWith('---\ndescription: ')).toBe(true);
    }
  });

  it('puts RUN_DIR and WORKTREE in every place a template names them', () => {
    for (const type of RUN_TYPES) {
      for (const command of renderRunCommands(spec(type))) {
        const kind = command.name.replace(/_a1b2c3$/, '');
        const template = fs.readFileSync(path.join(TEMPLATES_DIR, `${kind}.md`), 'utf8');
        expect(count(command.content, RUN_DIR), command.name).toBe(count(template, '{{RUN_DIR}}'));
        if (type === 'fix') expect(count(command.content, WORKTREE)).toBe(count(template, '{{WORKTREE}}'));
        expect(count(command.content, 'a1b2c3')).toBeGreaterThanOrEqual(count(template, '{{RUN_ID}}'));
      }
    }
  });

  it.each([
    ['scout', `Edit(/${RUN_DIR}/report.md), Edit(/${RUN_DIR}/raw/evidence/**)`],
    ['plan', `Edit(/${RUN_DIR}/plan.md), Edit(/${RUN_DIR}/report.md), Edit(/${RUN_DIR}/raw/evidence/**)`],
    ['review', `Edit(/${RUN_DIR}/report.md), Edit(/${RUN_DIR}/raw/evidence/**)`],
    ['fix', `Edit(/${WORKTREE}/**), Edit(/${RUN_DIR}/report.md), Edit(/${RUN_DIR}/raw/evidence/**)`],
  ] as const)('%s grants edits only where its artifacts go', (type, allowed) => {
    const [main, report] = renderRunCommands(spec(type));
    expect(matter(main!.content).data['allowed-tools']).toBe(allowed);
    expect(matter(report!.content).data['allowed-tools']).toBe(`Edit(/${RUN_DIR}/report.md)`);
    // Absolute paths in permission rules take two slashes.
    expect(allowed).toContain('Edit(//work/repo/');
  });

  it('keeps read-only tiers free of grants that widen reading or writing', () => {
    // Measured: a bare Read/Grep/Glob rule lets them read outside the project, and
    // Bash(git diff:*) lets `git diff --output=<any file>` write; claude already allows the
    // read-only forms of these inside the project without a rule.
    for (const type of RUN_TYPES) {
      for (const command of renderRunCommands(spec(type))) {
        const allowed = String(matter(command.content).data['allowed-tools'] ?? '');
        const rules = allowed.split(/,\s*/).filter(Boolean);
        for (const rule of rules)
          expect(rule, `${command.name}: ${rule}`).toMatch(/^Edit\(\/\/work\/repo\/.+\)$/);
      }
    }
  });

  it('never lets an empty worktree into a rule: a fix run needs one', () => {
    const error = thrown(() => renderRunCommands(spec('fix', { worktree: null })));
    expect(error.code).toBe('USAGE');
    expect(error.message).toContain('WORKTREE');
  });

  it('leaves the worktree out of non-fix commands', () => {
    const rendered = renderRunCommands(spec('scout', { worktree: '/work/repo/tree' }));
    for (const c of rendered) expect(c.content).not.toContain('/work/repo/tree');
  });

  it('refuses a run name that does not end in the run id', () => {
    expect(thrown(() => renderRunCommands(spec('scout', { runName: '25-11-22_1430__x__ffffff' }))).code).toBe(
      'RUN_NAME_INVALID',
    );
    expect(thrown(() => renderRunCommands(spec('scout', { runName: 'a1b2c3' }))).code).toBe(
      'RUN_NAME_INVALID',
    );
  });

  it('keeps frontmatter valid YAML for unusual but allowed paths', () => {
    const runDir = '/home/me/My Project (old)/#1: ünï ~x=y+z/.agents/runs/r';
    const [scout] = renderRunCommands(spec('scout', { runDir }));
    expect(matter(scout!.content).data['allowed-tools']).toBe(
      `Edit(/${runDir}/report.md), Edit(/${runDir}/raw/evidence/**)`,
    );
  });

  it('drops a trailing slash instead of writing `//report.md`', () => {
    const [scout] = renderRunCommands(spec('scout', { runDir: `${RUN_DIR}/` }));
    expect(scout!.content).toContain(`Edit(/${RUN_DIR}/report.md)`);
    expect(scout!.content).not.toContain(`${RUN_DIR}//`);
  });
});

describe('commandPathProblem', () => {
  it.each([
    ['relative', 'work/repo', /not absolute/],
    ['root: a rule on it covers every file', '/', /root/],
    ['root with slashes', '///', /root/],
    ['dot-dot', '/work/../etc', /not normalized/],
    ['double slash', '/work//repo', /not normalized/],
    ['dollar: $1 and $ARGUMENTS are substituted', '/work/$1/repo', /"\$"/],
    ['backtick: !`cmd` runs', '/work/!`id`/repo', /"`"/],
    ['comma: splits allowed-tools', '/work/a,b', /","/],
    ['glob star widens a rule', '/work/*', /"\*"/],
    ['glob question mark', '/work/a?', /"\?"/],
    ['glob brackets', '/work/[ab]', /"\["/],
    ['glob braces', '/work/{a,b}', /"\{"|","/],
    ['double quote', '/work/"x"', /"\\""/],
    ['backslash', '/work/a\\b', /"\\\\"/],
    ['newline', '/work/a\nb', /"\\n"/],
    ['tab', '/work/a\tb', /"\\t"/],
    ['space then @ includes a file', '/work/my @home', /@/],
  ])('%s', (_label, dir, problem) => {
    expect(commandPathProblem(dir)).toMatch(problem);
    expect(thrown(() => renderRunCommands(spec('scout', { runDir: dir }))).code).toBe('USAGE');
  });

  it.each([
    '/work/repo',
    '/work/repo/',
    '/home/me/My Project (old)/x',
    '/tmp/ünïcödé/🚀',
    '/a/b@c/d',
    '/srv/x#1:y',
  ])('accepts %j', (dir) => {
    expect(commandPathProblem(dir)).toBeNull();
  });

  it('checks the worktree too', () => {
    expect(thrown(() => renderRunCommands(spec('fix', { worktree: '/work/$HOME' }))).message).toContain(
      'worktree',
    );
  });
});

describe('templates', () => {
  it('resolve to <repo>/templates/commands from src/ and from dist/', () => {
    const expected = path.join(REPO_ROOT, 'templates', 'commands') + path.sep;
    expect(TEMPLATES_DIR).toBe(expected);
    for (const module of ['src/slash/templates.ts', 'dist/slash/templates.js']) {
      expect(templatesDirFor(pathToFileURL(path.join(REPO_ROOT, module)).href)).toBe(expected);
    }
  });

  it('exist for every kind, and nothing else is in the folder', () => {
    const files = fs.readdirSync(TEMPLATES_DIR).sort();
    expect(files).toEqual([...SAFE_KINDS, ...HUMAN_ONLY_KINDS].map((k) => `${k}.md`).sort());
  });
});

describe('writeRunCommands / removeRunCommands / listRunCommandDirs', () => {
  const dirs: string[] = [];
  const launchDir = () => {
    const dir = tempDir('agentbox-slash-');
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes the rendered files into .claude/commands/run_<id>/', () => {
    const root = launchDir();
    const result = writeRunCommands(root, spec('scout'));
    const dir = path.join(root, '.claude', 'commands', 'run_a1b2c3');
    expect(result.dir).toBe(dir);
    const names = ['scout_a1b2c3.md', 'report_a1b2c3.md', 'merge_a1b2c3.md', 'apply_a1b2c3.md'];
    expect(result.files).toEqual(names.map((n) => path.join(dir, n)));
    expect(fs.readdirSync(dir).sort()).toEqual([...names].sort());
    for (const command of renderRunCommands(spec('scout'))) {
      expect(fs.readFileSync(path.join(dir, command.file), 'utf8')).toBe(command.content);
    }
  });

  it('replaces what a previous write left (resume regenerates the same set)', () => {
    const root = launchDir();
    const dir = writeRunCommands(root, spec('fix')).dir;
    fs.writeFileSync(path.join(dir, 'stale_a1b2c3.md'), 'old');
    fs.writeFileSync(path.join(dir, 'scout_a1b2c3.md.123'), 'a temp file a crash left');
    fs.writeFileSync(path.join(dir, 'fix_a1b2c3.md'), 'tampered');
    writeRunCommands(root, spec('fix'));
    expect(fs.readdirSync(dir).sort()).toEqual([
      'apply_a1b2c3.md',
      'fix_a1b2c3.md',
      'merge_a1b2c3.md',
      'report_a1b2c3.md',
    ]);
    expect(fs.readFileSync(path.join(dir, 'fix_a1b2c3.md'), 'utf8')).toBe(
      renderRunCommands(spec('fix'))[0]!.content,
    );
  });

  it('keeps runs apart and lists the ids that have a folder', () => {
    const root = launchDir();
    expect(listRunCommandDirs(root)).toEqual([]);
    writeRunCommands(root, spec('scout', { runId: 'd4e5f6' }));
    writeRunCommands(root, spec('plan', { runId: '0a0b0c' }));
    fs.mkdirSync(path.join(root, '.claude', 'commands', 'run_notanid'));
    fs.writeFileSync(path.join(root, '.claude', 'commands', 'mine.md'), 'a user command');
    expect(listRunCommandDirs(root)).toEqual(['0a0b0c', 'd4e5f6']);
    expect(fs.readdirSync(path.join(root, '.claude', 'commands', 'run_d4e5f6')).sort()).toEqual([
      'apply_d4e5f6.md',
      'merge_d4e5f6.md',
      'report_d4e5f6.md',
      'scout_d4e5f6.md',
    ]);
  });

  it('removes one run idempotently and leaves .claude/commands and the user commands alone', () => {
    const root = launchDir();
    writeRunCommands(root, spec('scout'));
    writeRunCommands(root, spec('scout', { runId: 'd4e5f6' }));
    fs.writeFileSync(path.join(root, '.claude', 'commands', 'mine.md'), 'a user command');
    expect(removeRunCommands(root, 'a1b2c3')).toBe(true);
    expect(removeRunCommands(root, 'a1b2c3')).toBe(false);
    expect(listRunCommandDirs(root)).toEqual(['d4e5f6']);
    expect(removeRunCommands(root, 'd4e5f6')).toBe(true);
    expect(fs.readdirSync(path.join(root, '.claude', 'commands'))).toEqual(['mine.md']);
    fs.rmSync(path.join(root, '.claude', 'commands', 'mine.md'));
    expect(removeRunCommands(root, 'd4e5f6')).toBe(false);
    expect(fs.existsSync(path.join(root, '.claude', 'commands'))).toBe(true);
  });

  it('says there was nothing to remove when .claude does not exist', () => {
    const root = launchDir();
    expect(removeRunCommands(root, 'a1b2c3')).toBe(false);
    expect(listRunCommandDirs(root)).toEqual([]);
    expect(fs.existsSync(path.join(root, '.claude'))).toBe(false);
  });

  it('never writes through or removes through a symlink in the run folder place', () => {
    const root = launchDir();
    const elsewhere = launchDir();
    fs.writeFileSync(path.join(elsewhere, 'keep.txt'), 'precious');
    const dir = path.join(root, '.claude', 'commands', 'run_a1b2c3');
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    fs.symlinkSync(elsewhere, dir);

    expect(listRunCommandDirs(root)).toEqual(['a1b2c3']);
    writeRunCommands(root, spec('scout'));
    expect(fs.lstatSync(dir).isDirectory()).toBe(true);
    expect(fs.readdirSync(elsewhere)).toEqual(['keep.txt']);

    fs.rmSync(dir, { recursive: true });
    fs.symlinkSync(elsewhere, dir);
    expect(removeRunCommands(root, 'a1b2c3')).toBe(true);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readFileSync(path.join(elsewhere, 'keep.txt'), 'utf8')).toBe('precious');
  });

  it.each([
    ['.claude', '.claude'],
    ['.claude/commands', '.claude/commands'],
  ])('refuses a %s linked out of the launch folder, naming it, and writes nothing there', (_, linked) => {
    const root = launchDir();
    const elsewhere = launchDir();
    fs.mkdirSync(path.dirname(path.join(root, linked)), { recursive: true });
    fs.symlinkSync(elsewhere, path.join(root, linked));
    expect(() => writeRunCommands(root, spec('scout'))).toThrow(
      `leads out of the repository through a link (${path.join(root, linked)} is ${fs.realpathSync(elsewhere)})`,
    );
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('renders before touching the disk: a bad spec writes nothing', () => {
    const root = launchDir();
    expect(thrown(() => writeRunCommands(root, spec('fix', { worktree: null }))).code).toBe('USAGE');
    expect(fs.existsSync(path.join(root, '.claude'))).toBe(false);
  });
});
