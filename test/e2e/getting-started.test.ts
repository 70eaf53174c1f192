import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestView, type Rule, startModelServer, text, tool } from '../fixtures/model-server/index.js';
import { REPO_ROOT, runAgentbox } from '../helpers/bin.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../helpers/claude.js';
import { normalize, playTour, tourSteps } from '../helpers/doc-tour.js';
import { gitRepo, tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

/**
 * docs/getting-started.md is true (issue 29, §4): its commands run, in order, on a small but real
 * Node package (a lockfile, a `node --test` suite) made here, with the real Claude Code and the
 * scripted model playing the agent; each prints what the page shows (run names, ids, hashes, times,
 * costs and paths aside). The change it merges passes the package's own `npm test`.
 * `TOUR_WRITE=<file>` writes what the commands printed (with the page's paths), to paste into it.
 */
const PAGE = fs.readFileSync(path.join(REPO_ROOT, 'docs/getting-started.md'), 'utf8');

/** The package as a person's repository holds it: nothing to download, so `npm ci` works offline. */
const PACKAGE = {
  'package.json': `${JSON.stringify(
    {
      name: 'kebab',
      version: '1.0.0',
      description: 'Turn a title into a URL slug',
      main: 'index.js',
      scripts: { test: 'node --test --test-reporter=spec' },
      license: 'MIT',
    },
    null,
    2,
  )}\n`,
  'package-lock.json': `${JSON.stringify(
    {
      name: 'kebab',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'kebab', version: '1.0.0', license: 'MIT' } },
    },
    null,
    2,
  )}\n`,
  '.gitignore': 'node_modules/\n',
  'index.js': [
    "'use strict';",
    '',
    '/** "Hello World" → "hello-world" */',
    'module.exports = function kebab(title) {',
    "  return title.toLowerCase().split(' ').join('-');",
    '};',
    '',
  ].join('\n'),
  'test/kebab.test.js': [
    "'use strict';",
    "const assert = require('node:assert/strict');",
    "const { test } = require('node:test');",
    "const kebab = require('..');",
    '',
    "test('joins lower-case words with dashes', () => {",
    "  assert.equal(kebab('Hello World'), 'hello-world');",
    '});',
    '',
  ].join('\n'),
};

const SCOUT = 'how are the tests of this package run?';
const FIX = 'kebab() must drop punctuation';

/** Reads, edits the code and its test, runs the tests, answers: a fix as the page shows it. */
const at = (r: RequestView, file: string) => path.join(r.workingDirectory!, file);
/** The revision `agentbox revise` asks for: one more test, then the answer. */
const REVISION = '<!-- agentbox: revision 2 (agentbox revise) -->';
const RULES: Rule[] = [
  {
    when: { lastUserText: REVISION },
    reply: (r) =>
      tool('Edit', {
        file_path: at(r, 'test/kebab.test.js'),
        old_string: "  assert.equal(kebab('Hello, World!'), 'hello-world');\n});\n",
        new_string:
          "  assert.equal(kebab('Hello, World!'), 'hello-world');\n});\n\ntest('a title of punctuation only gives an empty slug', () => {\n  assert.equal(kebab('!!!'), '');\n});\n",
      }),
  },
  {
    when: { anyText: REVISION },
    reply: text("Added the test: `kebab('!!!')` gives `''`. `npm test` passes (3 tests)."),
  },
  { when: { anyText: SCOUT, turn: 0 }, reply: (r) => tool('Read', { file_path: at(r, 'package.json') }) },
  {
    when: { anyText: SCOUT },
    reply: text(
      '`npm test` runs `node --test --test-reporter=spec` (package.json, `scripts.test`): Node’s own test runner, which finds `test/kebab.test.js`. There are no dependencies to install.',
    ),
  },
  {
    when: { anyText: FIX, turn: 0 },
    reply: (r) => ({
      tools: [
        { name: 'Read', input: { file_path: at(r, 'index.js') } },
        { name: 'Read', input: { file_path: at(r, 'test/kebab.test.js') } },
      ],
    }),
  },
  {
    when: { anyText: FIX, turn: 1 },
    reply: (r) => ({
      tools: [
        {
          name: 'Edit',
          input: {
            file_path: at(r, 'index.js'),
            old_string: "  return title.toLowerCase().split(' ').join('-');",
            new_string:
              "  return title\n    .toLowerCase()\n    .split(/[^a-z0-9]+/)\n    .filter(Boolean)\n    .join('-');",
          },
        },
        {
          name: 'Edit',
          input: {
            file_path: at(r, 'test/kebab.test.js'),
            old_string: "  assert.equal(kebab('Hello World'), 'hello-world');\n});\n",
            new_string:
              "  assert.equal(kebab('Hello World'), 'hello-world');\n});\n\ntest('drops punctuation', () => {\n  assert.equal(kebab('Hello, World!'), 'hello-world');\n});\n",
          },
        },
      ],
    }),
  },
  {
    when: { anyText: FIX, turn: 2 },
    reply: tool('Bash', { command: 'npm test', description: 'Run the tests' }),
  },
  {
    when: { anyText: FIX },
    reply: text(
      'kebab() now splits on every run of characters other than letters and digits and drops the empty ends, so `kebab("Hello, World!")` gives `hello-world`. Added a test for it; `npm test` passes (2 tests).',
    ),
  },
];

describe('docs/getting-started.md', () => {
  const tag = newTestTag();
  let server: Awaited<ReturnType<typeof startModelServer>>;
  const home = claudeHome();
  const repo = gitRepo({ files: PACKAGE });
  // Claude Code on the PATH, as `npm install -g @anthropic-ai/claude-code` puts it.
  const bin = tempDir('agentbox-gs-bin-');
  fs.symlinkSync(CLAUDE_BIN, path.join(bin, 'claude'));
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startModelServer(RULES);
    const base = claudeEnv({
      home,
      modelUrl: server.url,
      extra: { AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag },
    });
    env = { ...base, PATH: `${bin}:${base.PATH}`, npm_config_update_notifier: 'false' };
  });
  afterAll(async () => {
    killTagged(tag);
    await server?.close();
    home.cleanup();
  });

  /** What the page shows for this test's folders: a person's repository, home and Claude Code. */
  const asShown = (printed: string) =>
    printed
      .replaceAll(`worktrees/${path.basename(repo.dir)}-`, 'worktrees/kebab-')
      .replaceAll(repo.dir, '/home/me/kebab')
      .replaceAll(home.home, '/home/me')
      .replaceAll(path.join(bin, 'claude'), '/usr/local/bin/claude');

  it('every command runs and prints what the page shows; the merged change passes npm test', async () => {
    const steps = tourSteps(PAGE, 'docs/getting-started.md');
    let workflow = '';
    const results = await playTour(
      steps,
      repo.dir,
      async ([cmd, ...args], command) => {
        if (cmd === 'git') return repo.git(...args);
        if (cmd === 'npm') {
          return execFileSync('npm', args, {
            cwd: repo.dir,
            env,
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
          });
        }
        if (cmd !== 'agentbox') throw new Error(`the page runs agentbox, git and npm only, not: ${command}`);
        const r = await runAgentbox(args, { cwd: repo.dir, env, timeoutMs: 60_000 });
        expect(r.code, `${command}\n${r.stdout}${r.stderr}`).toBe(0);
        if (args.includes('--ci')) workflow = repo.read('.github/workflows/agentbox.yml');
        return r.stdout + r.stderr;
      },
      { asShown },
    );
    const shown = {
      '<repo>': /\/home\/me\/kebab/g,
      '<claude>': new RegExp(`${path.join(bin, 'claude')}|/usr/local/bin/claude`, 'g'),
      '<home>': new RegExp(`${home.home}|/home/me`, 'g'),
      // The worktrees' folder is named after the repository's (with a hash of its path).
      '<name>-': /(?<=worktrees\/)(agentbox-repo-\w{6}|kebab)-/g,
      // watch shortens a long path from its start, into the run's name.
      '…<run>': /…[\d_-]*__[a-z0-9-]+__[0-9a-f]{6}/g,
      // A run's slash commands are named with its id.
      '$1_<id>': /\b(fix|report|merge|apply)_[0-9a-f]{6}\b/g,
      // The page's model is Anthropic's API; the test's, the scripted model on a loopback port.
      '<api>': /http:\/\/127\.0\.0\.1:\d+|https:\/\/api\.anthropic\.com/g,
      'answered HTTP 200 in <time>': /answered HTTP 200 in \d+ ms/g,
      // uninstall's progress: how long each removal took.
      ', <seconds>)': /, \d+\.\d s\)/g,
      '<uuid>': /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
      '<date>': /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g,
      '<size>': /\b\d+(\.\d+)? (B|KB|MB)\b/g,
      'git <version>': /git \d+\.\d+\.\d+/g,
      duration_ms: /duration_ms [\d.]+/g,
      // doctor's Node line is the line the test runs on (CI: 24, 22 and 20; a warning past its end).
      '<node line>': /^[✓!] node +Node \d+\.\d+\.\d+: [^\n]*(\n +fix: [^\n]*)?/gm,
      'All checks passed.': /All checks passed\. \d+ warning\(s\) \(!\) above\./g,
    };
    for (const { step, printed } of results) {
      const got = normalize(printed, shown);
      const want = normalize(step.output.join('\n'), shown);
      // A live watch prints a refusal found in the stream at the run's end when it learns of it:
      // last when it followed the run to its end, in its place when the run had ended before the
      // watch began (docs/runs.md). The lines are the same, the outcome last either way.
      if (step.command.startsWith('agentbox watch')) {
        expect([...got].sort(), step.command).toEqual([...want].sort());
        expect(got.slice(-2), step.command).toEqual(want.slice(-2));
      } else expect(got, step.command).toEqual(want);
    }
    // The workflow installs agentbox from the source the page names, as one quoted word.
    expect(workflow).toContain('# Installs agentbox from: https://files.example/agentbox-0.1.0.tgz ');
    expect(workflow).toContain(" 'https://files.example/agentbox-0.1.0.tgz' ");
    // The agent's own `npm test` ran in its sandbox, on its edits, and passed.
    const toolResults = server.requests.flatMap((r) => r.view.toolResults);
    expect(toolResults.find((r) => r.content.includes('> kebab@1.0.0 test'))?.content).toContain('ℹ pass 2');
    // The change merged is the package's: its own tests pass on it, and they test the new behaviour.
    expect(repo.read('index.js')).toContain('.split(/[^a-z0-9]+/)');
    expect(execFileSync('npm', ['test'], { cwd: repo.dir, env, encoding: 'utf8' })).toContain('ℹ pass 3');
    await expectNoProcessesLeft(tag);
  }, 120_000);
});
