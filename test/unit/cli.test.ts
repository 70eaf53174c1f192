import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { memoryIo } from '../../src/context.js';
import { invokedCommand } from '../../src/util/argv.js';
import { gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';

const PACKAGE_VERSION = (
  JSON.parse(
    fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'), 'utf8'),
  ) as { version: string }
).version;
const COMMANDS = [
  'init',
  'uninstall',
  'trust',
  'doctor',
  'scout',
  'plan',
  'fix',
  'review',
  'rerun',
  'templates',
  'diff',
  'merge',
  'discard',
  'push',
  'fetch',
  'resume',
  'revise',
  'inject',
  'start',
  'watch',
  'restart',
  'stop',
  'state',
  'recover',
  'gc',
  'status',
  'show',
  'ui',
  'serve',
  'k8s',
  'ci',
];

let dir: string;
let repo: TestRepo | undefined;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => {
  repo = undefined;
});

async function cli(argv: string[], cwd = dir) {
  const io = memoryIo();
  const code = await run(argv, { cwd, env: {}, io });
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const notARepo = (folder: string) =>
  `agentbox: not a git repository: ${folder}\n  → run "git init" first, or cd into your repo\n`;

describe('run', () => {
  const HINT = '(agentbox --help lists the commands; agentbox <command> --help, its options)\n';
  it('suggests the command for a typo in three lines, not the whole help, and exits 2', async () => {
    const result = await cli(['statsu']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: unknown command 'statsu'\n(Did you mean status?)\n${HINT}`);
  });

  it('suggests the option for a typo, with the command’s usage, and exits 2', async () => {
    const result = await cli(['status', '--jsn']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: unknown option '--jsn'\n(Did you mean --json?)\n${HINT}`);
  });

  it('an option before its command says where it goes (found by QA: agentbox --json status)', async () => {
    const result = await cli(['--json', 'status']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: unknown option '--json'\n${HINT}  → a command's options go after it: agentbox status --json\n`,
    );
    // -C and --cwd belong there: no such line.
    expect((await cli(['-C', dir, 'status', '--jsn'])).stderr).not.toContain('go after it');
  });

  it('exits 2 on a missing argument', async () => {
    const result = await cli(['show']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: missing required argument 'run'\n${HINT}`);
  });

  it('exits 2 on a usage error found by the command itself', async () => {
    repo = gitRepo();
    expect(await cli(['status', '--limit', 'many'], repo.dir)).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'agentbox: invalid --limit "many": expected a positive whole number\n' +
        '  → for example: agentbox status --limit 50, or agentbox status --all\n',
    });
  });

  it.each([[['--help']], [['-h']], [['help']], [[]]])(
    '%j prints help listing every command and exits 0',
    async (argv) => {
      const result = await cli(argv);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: agentbox \[options\] \[command\]\n/);
      const listed = [...result.stdout.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]);
      expect(listed).toEqual([...COMMANDS, 'help']);
      expect(result.stdout).toContain('-C, --cwd <dir>');
    },
  );

  it.each(COMMANDS)('%s --help: the table defines the command it runs, by its own name', async (name) => {
    const result = await cli([name, '--help']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(new RegExp(`^Usage: agentbox ${name} `));
  });

  it('tells the command from argv without the table, or leaves it to the whole table', () => {
    expect(invokedCommand(['status', '--all'])).toBe('status');
    expect(invokedCommand(['-C', 'sub', 'show', 'latest'])).toBe('show');
    expect(invokedCommand(['--cwd', 'sub', 'merge'])).toBe('merge');
    expect(invokedCommand(['--cwd=sub', 'gc'])).toBe('gc');
    expect(invokedCommand(['-Csub', 'diff'])).toBe('diff');
    expect(invokedCommand(['--help', 'status'])).toBeUndefined();
    expect(invokedCommand(['-v'])).toBeUndefined();
    expect(invokedCommand(['-C', 'sub'])).toBeUndefined();
    expect(invokedCommand([])).toBeUndefined();
  });

  it.each([[['help', 'status']], [['-C', '.', 'status', '--help']]])(
    '%j prints the status help',
    async (argv) => {
      const result = await cli(argv);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: agentbox status \[options\]\n/);
    },
  );

  it('prints one command’s help', async () => {
    const result = await cli(['status', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: agentbox status \[options\]\n\nlist runs, newest first\n/);
    expect(result.stdout).toContain('--json');
  });

  it.each([[['--version']], [['-v']]])('%j prints the package version and exits 0', async (argv) => {
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(await cli(argv)).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it('turns an AgentboxError into its message, a hint line and exit 1', async () => {
    expect(await cli(['status'])).toEqual({ code: 1, stdout: '', stderr: notARepo(dir) });
  });

  it('with --json, the failure is a JSON document on stdout too, the text on stderr, the same exit code', async () => {
    const result = await cli(['status', '--json']);
    expect(result).toMatchObject({ code: 1, stderr: notARepo(dir) });
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        code: 'NOT_A_GIT_REPO',
        message: `not a git repository: ${dir}`,
        hint: 'run "git init" first, or cd into your repo',
      },
    });
  });

  it.each([
    ['-C', (target: string) => ['-C', target, 'status']],
    ['--cwd', (target: string) => ['--cwd', target, 'status']],
    ['--cwd=', (target: string) => [`--cwd=${target}`, 'status']],
  ])('honours %s <dir>', async (_flag, argv) => {
    repo = gitRepo();
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    // Run from inside a repository, pointed at a folder that is not one.
    expect(await cli(argv(elsewhere), repo.dir)).toEqual({
      code: 1,
      stdout: '',
      stderr: notARepo(elsewhere),
    });
  });

  it('resolves a relative -C against the cwd it was given', async () => {
    fs.mkdirSync(path.join(dir, 'sub'));
    expect(await cli(['-C', 'sub', 'status'])).toEqual({
      code: 1,
      stdout: '',
      stderr: notARepo(path.join(dir, 'sub')),
    });
  });

  it('says when the -C folder does not exist', async () => {
    const missing = path.join(dir, 'missing');
    expect(await cli(['-C', missing, 'status'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentbox: folder does not exist: ${missing}\n  → cd into your repository, or pass an existing folder with -C <dir>\n`,
    });
  });

  it('says when -C names a file (or a path through one), for every command, doctor included: no crash', async () => {
    fs.writeFileSync(path.join(dir, 'afile'), 'x');
    const file = path.join(dir, 'afile');
    const said = `agentbox: not a folder: ${file}\n  → pass the folder of your repository (or one inside it) with -C <dir>, not a file\n`;
    for (const command of [['status'], ['init'], ['doctor'], ['show', 'x'], ['scout', 'q'], ['uninstall']])
      expect(await cli(['-C', file, ...command]), command.join(' ')).toEqual({
        code: 1,
        stdout: '',
        stderr: said,
      });
    const through = path.join(file, 'sub');
    expect(await cli(['-C', through, 'status'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentbox: folder does not exist: ${through}\n  → cd into your repository, or pass an existing folder with -C <dir>\n`,
    });
  });

  it('a task split into words by the shell says to quote it; init --force without --ci is refused', async () => {
    const split = await cli(['scout', 'why', 'is', 'login', 'slow']);
    expect(split.code).toBe(2);
    expect(split.stderr).toContain('→ the task is one argument: put it in quotes, agentbox scout "<task>"');
    repo = gitRepo();
    const force = await cli(['-C', repo.dir, 'init', '--force']);
    expect(force).toMatchObject({ code: 2, stdout: '' });
    expect(force.stderr).toContain('--force goes with --ci: it replaces a pipeline file');
    expect(fs.existsSync(path.join(repo.dir, '.agents'))).toBe(false);
  });

  it('runs the command in the -C repository', async () => {
    repo = gitRepo();
    expect(await cli(['-C', repo.dir, 'status'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentbox is not set up in ${repo.dir} — run "agentbox init"\n`,
    });
    expect((await cli(['-C', repo.dir, 'init'])).code).toBe(0);
    expect(await cli(['-C', repo.dir, 'status', '--json'])).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ runs: [], total: 0 }, null, 2)}\n`,
      stderr: '',
    });
  });
});
