import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_CONFIG_TEMPLATE } from '../../src/config/template.js';
import { IGNORE_MARK } from '../../src/git/ignore.js';
import { GUARD_MARK, MARKER_KEY } from '../../src/settings/managed.js';
import { agentbox } from '../helpers/cli.js';
import { gitRepo, snapshotTree, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { makeReadOnly } from '../helpers/read-only.js';

function repo(options?: Parameters<typeof gitRepo>[0]): TestRepo {
  const r = gitRepo(options);
  return r;
}
/** Written out, not imported from src: a rule dropped or reworded in src must fail here. */
const DENY_RULES = [
  'Read(./.agents/**)',
  'Bash(agentbox merge:*)',
  'Bash(agentbox discard:*)',
  'Bash(npx agentbox merge:*)',
  'Bash(npx agentbox discard:*)',
];
const settingsOf = (r: TestRepo, file = '.claude/settings.json') => JSON.parse(r.read(file));

describe('agentbox init', () => {
  it('creates the ledger, ignores it, installs the guard rails and writes the config', async () => {
    const r = repo();
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const p of ['.agents/runs', '.agents/pointers', '.agents/INDEX.md', '.agents/INDEX.jsonl']) {
      expect(r.exists(p), p).toBe(true);
    }
    expect(r.read('.agents/INDEX.jsonl')).toBe('');
    expect(r.read('.gitignore')).toBe(`${IGNORE_MARK}\n.agents/\n.claude/commands/run_*/\n`);
    // git itself agrees that the ledger is ignored
    fs.writeFileSync(path.join(r.dir, '.agents/runs/probe'), 'x');
    expect(r.git('status', '--porcelain', '--untracked-files=all')).not.toContain('.agents');
    const settings = settingsOf(r);
    expect(settings.permissions.deny).toEqual(DENY_RULES);
    expect(JSON.stringify(settings.hooks.PreToolUse)).toContain(GUARD_MARK);
    expect(settings[MARKER_KEY].deny).toEqual(DENY_RULES);
    expect(r.read('agentbox.yaml')).toBe(PROJECT_CONFIG_TEMPLATE);
    expect(result.stdout).toContain(`agentbox is set up in ${r.dir}`);
  });

  it('is idempotent: a second run changes no byte and says so', async () => {
    const r = repo();
    expect((await agentbox(['init'], { cwd: r.dir })).code).toBe(0);
    const before = snapshotTree(r.dir, { skip: [] });
    const second = await agentbox(['init'], { cwd: r.dir });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`agentbox is already set up in ${r.dir} — nothing changed.\n`);
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('merges into existing settings without touching the user entries, and uninstall restores them', async () => {
    const original = `{
    "model": "opus",
    "permissions": { "allow": ["Bash(npm test:*)"], "deny": ["Read(./secrets/**)"] },
    "hooks": {
        "PreToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "./lint.sh" }] }],
        "Stop": [{ "hooks": [{ "type": "command", "command": "echo done" }] }]
    }
}
`;
    const r = repo({ files: { '.claude/settings.json': original, '.gitignore': 'node_modules/\n' } });
    expect((await agentbox(['init'], { cwd: r.dir })).code).toBe(0);
    const merged = settingsOf(r);
    expect(merged.model).toBe('opus');
    expect(merged.permissions.allow).toEqual(['Bash(npm test:*)']);
    expect(merged.permissions.deny).toEqual(['Read(./secrets/**)', ...DENY_RULES]);
    expect(merged.hooks.PreToolUse[0]).toEqual({
      matcher: 'Write',
      hooks: [{ type: 'command', command: './lint.sh' }],
    });
    expect(merged.hooks.PreToolUse).toHaveLength(2);
    expect(merged.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: 'echo done' }] }]);
    expect(r.read('.gitignore')).toBe(`node_modules/\n\n${IGNORE_MARK}\n.agents/\n.claude/commands/run_*/\n`);

    const result = await agentbox(['uninstall'], { cwd: r.dir });
    expect(result.code).toBe(0);
    expect(r.read('.claude/settings.json')).toBe(original);
    expect(r.read('.gitignore')).toBe('node_modules/\n');
    expect(r.exists('agentbox.yaml')).toBe(false);
    expect(r.exists('.agents/runs')).toBe(true);
    expect(result.stdout).toContain('kept .agents/');
  });

  it('does not claim a deny rule the user already had, so uninstall keeps it', async () => {
    const original = '{\n  "permissions": {\n    "deny": [\n      "Read(./.agents/**)"\n    ]\n  }\n}\n';
    const r = repo({ files: { '.claude/settings.json': original } });
    await agentbox(['init'], { cwd: r.dir });
    expect(settingsOf(r)[MARKER_KEY].deny).not.toContain('Read(./.agents/**)');
    await agentbox(['uninstall'], { cwd: r.dir });
    expect(r.read('.claude/settings.json')).toBe(original);
  });

  it('adds nothing to .gitignore when the user already ignores the ledger', async () => {
    const r = repo({ files: { '.gitignore': '.agents\n.claude/commands/\n' } });
    await agentbox(['init'], { cwd: r.dir });
    expect(r.read('.gitignore')).toBe('.agents\n.claude/commands/\n');
  });

  it('--local installs into settings.local.json and ignores through .git/info/exclude', async () => {
    const r = repo();
    const result = await agentbox(['init', '--local'], { cwd: r.dir });
    expect(result.code).toBe(0);
    expect(r.exists('.claude/settings.json')).toBe(false);
    expect(settingsOf(r, '.claude/settings.local.json').permissions.deny).toEqual(DENY_RULES);
    expect(r.exists('.gitignore')).toBe(false);
    expect(r.read('.git/info/exclude')).toContain(
      `${IGNORE_MARK}\n.agents/\n.claude/commands/run_*/\nagentbox.yaml\n`,
    );
    expect(r.git('status', '--porcelain', '--untracked-files=all')).not.toContain('agentbox.yaml');

    await agentbox(['uninstall'], { cwd: r.dir });
    expect(r.exists('.claude')).toBe(false);
    // The kept ledger stays ignored; --purge takes the last line out with it.
    expect(r.read('.git/info/exclude')).toContain(`${IGNORE_MARK}\n.agents/\n`);
    expect(r.read('.git/info/exclude')).not.toContain('agentbox.yaml');
    await agentbox(['uninstall', '--purge'], { cwd: r.dir });
    expect(r.read('.git/info/exclude')).not.toContain('agentbox');
  });

  it('works from a subfolder and finds the repository root', async () => {
    const r = repo({ files: { 'src/deep/file.ts': 'x' } });
    expect((await agentbox(['init'], { cwd: path.join(r.dir, 'src/deep') })).code).toBe(0);
    expect(r.exists('.agents/runs')).toBe(true);
    expect(r.exists('src/deep/.agents')).toBe(false);
  });
});

describe('agentbox init: bad input changes nothing', () => {
  it('refuses a folder that is not a git repository', async () => {
    const dir = tempDir();
    const result = await agentbox(['init'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`agentbox: not a git repository: ${dir}`);
    expect(result.stderr).toContain('git init');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses a bare repository', async () => {
    const r = repo({ bare: true });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('bare repository');
    expect(result.stderr).toContain('git clone');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('refuses settings.json that is not valid JSON, naming the path and the position', async () => {
    const broken = '{\n  "hooks": {\n    "Stop": []\n  },,\n}\n';
    const r = repo({ files: { '.claude/settings.json': broken } });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${r.dir}/.claude/settings.json is not valid JSON`);
    expect(result.stderr).toMatch(/at line 4, column 5/);
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('refuses a .claude that is a file, naming it and how to go on, writing nothing (it failed on a temp name)', async () => {
    const r = repo({ files: { '.claude': 'not a folder\n' } });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${r.dir}/.claude is not a folder: Claude Code's project settings go in`);
    expect(result.stderr).toContain(`mv ${r.dir}/.claude ${r.dir}/.claude.file`);
    expect(result.stderr).not.toMatch(/\.tmp|ENOTDIR/);
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('refuses a settings file with comments (Claude Code drops such a file)', async () => {
    const r = repo({ files: { '.claude/settings.json': '{\n  // mine\n  "model": "opus"\n}\n' } });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is not valid JSON: InvalidCommentToken at line 2, column 3/);
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it.each([
    ['[]', 'the top level should be a JSON object, got an array'],
    ['{"hooks": []}', '"hooks" should be an object keyed by event name, got an array'],
    [
      '{"hooks": {"PreToolUse": {}}}',
      '"hooks.PreToolUse" should be an array of matcher groups, got an object',
    ],
    ['{"permissions": {"deny": "Read(x)"}}', '"permissions.deny" should be an array, got a string'],
    [
      '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "2"}]}]}}',
      'timeout must be a positive number',
    ],
  ])('refuses settings with an unexpected shape: %s', async (content, message) => {
    const r = repo({ files: { '.claude/settings.json': content } });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('.claude/settings.json');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('refuses a read-only repository folder with a clear message and leaves it as it was', async () => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: [] });
    const restore = makeReadOnly(r.dir);
    let result: Awaited<ReturnType<typeof agentbox>>;
    try {
      result = await agentbox(['init'], { cwd: r.dir });
    } finally {
      restore();
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot create the folder .*\.agents: permission denied/);
    expect(result.stderr).toContain('permissions');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('rolls back every earlier write when a later one fails (read-only .claude/)', async () => {
    const r = repo({ files: { '.claude/keep.txt': 'x' } });
    const before = snapshotTree(r.dir, { skip: [] });
    const restore = makeReadOnly(path.join(r.dir, '.claude'));
    let result: Awaited<ReturnType<typeof agentbox>>;
    try {
      result = await agentbox(['init'], { cwd: r.dir });
    } finally {
      restore();
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('.claude/settings.json');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('refuses an invalid agentbox.yaml before writing anything', async () => {
    const r = repo({ files: { 'agentbox.yaml': 'claude:\n  bni: claude\n' } });
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['init'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown setting "claude.bni"');
    expect(result.stderr).toContain('did you mean "claude.bin"?');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });
});

describe('agentbox uninstall', () => {
  it('on a repository where init never ran, says there is nothing to do', async () => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['uninstall'], { cwd: r.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('nothing to uninstall');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });

  it('removes exactly what init added; a second uninstall has nothing to do', async () => {
    const r = repo();
    const before = snapshotTree(r.dir, { skip: [] });
    await agentbox(['init'], { cwd: r.dir });
    await agentbox(['uninstall', '--purge'], { cwd: r.dir });
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
    const again = await agentbox(['uninstall'], { cwd: r.dir });
    expect(again.stdout).toContain('nothing to uninstall');
  });

  it('keeps an agentbox.yaml the user edited, and says so', async () => {
    const r = repo();
    await agentbox(['init'], { cwd: r.dir });
    r.write('agentbox.yaml', 'claude:\n  model: opus\n');
    const result = await agentbox(['uninstall'], { cwd: r.dir });
    expect(r.read('agentbox.yaml')).toBe('claude:\n  model: opus\n');
    expect(result.stdout).toContain('kept agentbox.yaml: it has your changes');
  });

  it('keeps hooks the user added after init', async () => {
    const r = repo();
    await agentbox(['init'], { cwd: r.dir });
    const settings = settingsOf(r);
    settings.hooks.PreToolUse.push({ matcher: 'Edit', hooks: [{ type: 'command', command: 'mine' }] });
    r.write('.claude/settings.json', `${JSON.stringify(settings, null, 2)}\n`);
    await agentbox(['uninstall'], { cwd: r.dir });
    expect(settingsOf(r)).toEqual({
      hooks: { PreToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'mine' }] }] },
    });
  });

  it('refuses to touch a settings file it cannot parse', async () => {
    const r = repo();
    await agentbox(['init'], { cwd: r.dir });
    r.write('.claude/settings.json', '{ nope');
    const before = snapshotTree(r.dir, { skip: [] });
    const result = await agentbox(['uninstall'], { cwd: r.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not valid JSON');
    expect(snapshotTree(r.dir, { skip: [] })).toEqual(before);
  });
});
