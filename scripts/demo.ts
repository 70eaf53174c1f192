/**
 * `npm run demo`: agentbox end to end in about a minute, with no API key and no network.
 *
 * A throwaway git repository with a bug, the real built CLI (`bin/agentbox.js`) and the real
 * Claude Code from devDependencies; only the model is a stand-in: the scripted Messages API of
 * test/fixtures/model-server, on 127.0.0.1 and a free port. Claude Code runs with a throwaway HOME
 * and CLAUDE_CONFIG_DIR, so the user's ~/.claude is never read or written.
 *
 *   npx tsx scripts/demo.ts          # run it (npm run demo builds first)
 *   npx tsx scripts/demo.ts --keep   # keep the project and the Claude home, and say where they are
 *
 * Exits 0 when every step worked, 1 with the failing step named otherwise (130/143 on Ctrl-C/SIGTERM).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pc from 'picocolors';
import {
  bash,
  type ModelServer,
  type RequestView,
  type Rule,
  startModelServer,
  text,
  tool,
} from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv } from '../test/helpers/claude.js';
import { killWithEnv } from '../test/helpers/processes.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const AGENTBOX_BIN = path.join(REPO_ROOT, 'bin/agentbox.js');
const STEP_TIMEOUT_MS = 45_000;

const SCOUT_QUESTION = 'why does greet() print undefined?';
const FIX_TASK = 'make greet() use the name it is given and add a test';

// ── The project the agent works on ──────────────────────────────────────────────────────────────

const BUGGY_LINE = 'function greet({ name }) {';
const FIXED_LINE = 'function greet(name) {';

const PROJECT_FILES: Record<string, string> = {
  'README.md': '# greeter\n\nSays hello: `node src/cli.js Ada`.\n',
  'package.json': `${JSON.stringify(
    { name: 'greeter', version: '1.0.0', private: true, scripts: { start: 'node src/cli.js' } },
    null,
    2,
  )}\n`,
  'src/greet.js': [
    "'use strict';",
    '',
    "/** The greeting for one person: greet('Ada') is 'Hello, Ada!'. */",
    BUGGY_LINE,
    "  return 'Hello, ' + name + '!';",
    '}',
    '',
    'module.exports = { greet };',
    '',
  ].join('\n'),
  'src/cli.js': [
    '#!/usr/bin/env node',
    "'use strict';",
    '',
    "const { greet } = require('./greet.js');",
    '',
    "console.log(greet(process.argv[2] ?? 'world'));",
    '',
  ].join('\n'),
};

const NEW_TEST = [
  "'use strict';",
  '',
  "const assert = require('node:assert/strict');",
  "const { greet } = require('../src/greet.js');",
  '',
  "assert.equal(greet('Ada'), 'Hello, Ada!');",
  "assert.equal(greet('world'), 'Hello, world!');",
  "console.log('ok - greet() uses the name it is given');",
  '',
].join('\n');

/** 1-based line of `needle` in a project file, for the file:line references the "model" gives. */
function lineOf(file: string, needle: string): number {
  const index = (PROJECT_FILES[file] ?? '').split('\n').findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`demo script: "${needle}" is not in ${file}`);
  return index + 1;
}

// ── What the stand-in model answers ─────────────────────────────────────────────────────────────

/** The absolute path of a project file in the directory Claude Code works in (repo or worktree). */
function inWorkdir(req: RequestView, file: string): string {
  if (!req.workingDirectory) throw new Error('the request names no working directory');
  return path.join(req.workingDirectory, file);
}

/**
 * One rule per turn of a run, matched by the run's task text (it is in every request of the
 * run), so the two runs never take each other's answers.
 */
function byTurn(run: string, task: string, replies: Rule['reply'][]): Rule[] {
  return replies.map((reply, turn) => ({
    name: `${run} turn ${turn}`,
    when: { anyText: task, turn },
    reply,
  }));
}

function modelScript(): Rule[] {
  const bug = `src/greet.js:${lineOf('src/greet.js', BUGGY_LINE)}`;
  const caller = `src/cli.js:${lineOf('src/cli.js', 'greet(process.argv')}`;
  const scout = byTurn('scout', SCOUT_QUESTION, [
    (req) => ({
      text: 'Let me read greet() and the code that calls it.',
      tools: [
        { name: 'Read', input: { file_path: inWorkdir(req, 'src/greet.js') } },
        { name: 'Read', input: { file_path: inWorkdir(req, 'src/cli.js') } },
      ],
    }),
    () =>
      text(
        [
          '## Why greet() prints "undefined"',
          '',
          `\`greet\` destructures its argument — \`${BUGGY_LINE}\` (${bug}) — so it reads the \`name\``,
          `*property* of what it is given. Its caller passes the name itself, a string (${caller}:`,
          "`greet(process.argv[2] ?? 'world')`), and a string has no `name` property: `name` is",
          '`undefined` and the template renders `Hello, undefined!`.',
          '',
          `**Fix:** take the string — \`${FIXED_LINE}\`. No caller passes an object. There is no`,
          "test for greet() yet; one calling `greet('Ada')` would have caught this.",
        ].join('\n'),
      ),
  ]);
  const fix = byTurn('fix', FIX_TASK, [
    (req) => ({
      text: 'First, greet() as it is now.',
      tools: [{ name: 'Read', input: { file_path: inWorkdir(req, 'src/greet.js') } }],
    }),
    (req) =>
      tool('Edit', {
        file_path: inWorkdir(req, 'src/greet.js'),
        old_string: BUGGY_LINE,
        new_string: FIXED_LINE,
      }),
    (req) => tool('Write', { file_path: inWorkdir(req, 'test/greet.test.js'), content: NEW_TEST }),
    () => bash('node test/greet.test.js'),
    (req) => {
      const run = req.toolResults[0];
      const output = (run?.content ?? '').trim();
      if (!run || run.isError || !output.includes('ok - ')) {
        return text(`The new test fails:\n\n\`\`\`\n${output}\n\`\`\`\n\nThe fix is not done.`);
      }
      return text(
        [
          `Fixed: \`greet()\` now takes the name itself (\`${FIXED_LINE}\`, ${bug}) instead of`,
          'destructuring a `{ name }` object that no caller passes, so `node src/cli.js Ada` prints',
          '"Hello, Ada!".',
          '',
          "Added `test/greet.test.js` (greet('Ada') and greet('world')). Verified with",
          '`node test/greet.test.js`:',
          '',
          '```',
          output,
          '```',
        ].join('\n'),
      );
    },
  ]);
  return [...scout, ...fix];
}

// ── Output ──────────────────────────────────────────────────────────────────────────────────────

const out = (s: string) => process.stdout.write(s);
const quote = (arg: string) =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, '\\$1')}"`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Writes streamed output indented by two spaces, whatever the chunk boundaries are. */
function indenter(write: (s: string) => void): { push(chunk: string): void; end(): void } {
  let atLineStart = true;
  return {
    push(chunk) {
      let s = '';
      for (const ch of chunk) {
        if (atLineStart && ch !== '\n') s += '  ';
        s += ch;
        atLineStart = ch === '\n';
      }
      write(s);
    },
    end() {
      if (!atLineStart) write('\n');
      atLineStart = true;
    },
  };
}

class DemoFailure extends Error {}

// ── Running the steps ───────────────────────────────────────────────────────────────────────────

interface Context {
  readonly root: string;
  readonly project: string;
  readonly home: string;
  readonly server: ModelServer;
  readonly env: Record<string, string>;
  /** Marks every process the demo starts (children inherit it), for the sweep at the end. */
  readonly mark: string;
}

const MARK_VAR = 'AGENTBOX_DEMO_MARK';
let current: ReturnType<typeof spawn> | undefined;
let interrupted: string | undefined;
let stepNumber = 0;
const STEPS = 14;

function banner(shown: string): void {
  stepNumber += 1;
  out(`\n${pc.dim(`[${stepNumber}/${STEPS}]`)} ${pc.bold(pc.cyan(`$ ${shown}`))}\n`);
}

/**
 * Runs one command in the project, its output streamed through (indented) and returned. Fails the
 * demo when it exits non-zero, is killed, or takes longer than STEP_TIMEOUT_MS.
 */
async function step(
  ctx: Context,
  shown: string,
  command: string,
  args: string[],
  options: { expectCode?: number } = {},
): Promise<string> {
  banner(shown);
  if (interrupted) throw new DemoFailure(`interrupted (${interrupted})`);
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: ctx.project,
    env: { ...ctx.env, [MARK_VAR]: ctx.mark },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  current = child;
  let output = '';
  const sink = indenter(out);
  const collect = (chunk: Buffer) => {
    const s = chunk.toString('utf8');
    output += s;
    sink.push(s);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // agentbox stops a run cleanly on SIGTERM; a second signal ends it at once.
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  }, STEP_TIMEOUT_MS);
  const { code, signal, error } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    error?: Error;
  }>((resolve) => {
    child.once('error', (e) => resolve({ code: null, signal: null, error: e }));
    child.once('close', (c, s) => resolve({ code: c, signal: s }));
  });
  clearTimeout(timer);
  current = undefined;
  sink.end();
  const took = Date.now() - started;
  const expected = options.expectCode ?? 0;
  if (error) throw new DemoFailure(`\`${shown}\` could not start: ${error.message}`);
  if (timedOut) throw new DemoFailure(`\`${shown}\` took longer than ${seconds(STEP_TIMEOUT_MS)}`);
  if (interrupted) throw new DemoFailure(`interrupted (${interrupted})`);
  if (code !== expected) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    throw new DemoFailure(`\`${shown}\` ${how} (expected ${expected}); its output is above`);
  }
  out(`${pc.dim(`  (${seconds(took)})`)}\n`);
  return output;
}

const agentbox = (ctx: Context, args: string[]) =>
  step(ctx, `agentbox ${args.map(quote).join(' ')}`, process.execPath, [AGENTBOX_BIN, ...args]);

/** Prints a file of the project the way `cat` would, indented. */
function cat(ctx: Context, file: string): string {
  banner(`cat ${file}`);
  const full = path.join(ctx.project, file);
  if (!fs.existsSync(full)) throw new DemoFailure(`${file} does not exist`);
  const content = fs.readFileSync(full, 'utf8');
  const sink = indenter(out);
  sink.push(content);
  sink.end();
  return content;
}

/** The run a `scout`/`fix` command started, from its first line ("started <run>"). */
function runName(output: string, shown: string): string {
  const name = /^started (\S+)$/m.exec(output)?.[1];
  if (!name) throw new DemoFailure(`\`${shown}\` did not say which run it started`);
  return name;
}

/**
 * After a run: every request of it must have been answered by the script (no fallback), and every
 * tool call the script made must have worked. Anything else means the run did not do what the
 * demo shows, even if it ended well.
 */
function checkConversation(ctx: Context, since: number, what: string): void {
  const requests = ctx.server.requests.slice(since);
  if (requests.length === 0) throw new DemoFailure(`${what}: Claude Code never called the model`);
  const unscripted = requests.filter((r) => r.rule === undefined);
  if (unscripted.length > 0) {
    const first = unscripted[0]!.view;
    throw new DemoFailure(
      `${what}: the stand-in model got ${unscripted.length} request(s) its script does not answer ` +
        `(turn ${first.turn}, last user text: ${JSON.stringify(first.lastUserText.slice(0, 200))})`,
    );
  }
  for (const r of requests) {
    for (const result of r.view.toolResults) {
      if (result.isError) {
        throw new DemoFailure(
          `${what}: a tool call of the scripted agent failed (turn ${r.view.turn}): ${result.content.slice(0, 500)}`,
        );
      }
    }
  }
}

function git(ctx: Context, args: string[]): Promise<string> {
  return step(ctx, `git ${args.map(quote).join(' ')}`, 'git', args);
}

async function demo(ctx: Context): Promise<void> {
  // The project as a developer has it (committed before the demo starts), with a bug that shows.
  await step(ctx, 'node src/cli.js Ada', process.execPath, ['src/cli.js', 'Ada']);

  await agentbox(ctx, ['init']);
  await git(ctx, ['add', '-A']);
  await git(ctx, ['commit', '--quiet', '-m', 'set up agentbox']);
  await agentbox(ctx, ['doctor']);

  let since = ctx.server.requests.length;
  const scout = await agentbox(ctx, ['scout', SCOUT_QUESTION]);
  checkConversation(ctx, since, 'the scout run');
  const scoutRun = runName(scout, 'agentbox scout');
  const report = cat(ctx, `.agents/runs/${scoutRun}/report.md`);
  if (!report.includes(`src/greet.js:${lineOf('src/greet.js', BUGGY_LINE)}`)) {
    throw new DemoFailure("the scout's report.md does not hold the model's answer");
  }

  since = ctx.server.requests.length;
  const fix = await agentbox(ctx, ['fix', FIX_TASK]);
  checkConversation(ctx, since, 'the fix run');
  const fixRun = runName(fix, 'agentbox fix');
  const patch = cat(ctx, `.agents/runs/${fixRun}/changes.patch`);
  if (!patch.includes(`+${FIXED_LINE}`) || !patch.includes('test/greet.test.js')) {
    throw new DemoFailure('changes.patch does not hold the fix and the new test');
  }

  const merged = await agentbox(ctx, ['merge', fixRun, '--yes']);
  if (!/\bmerged\b/.test(merged)) throw new DemoFailure('agentbox merge did not say it merged');
  await git(ctx, ['status', '--short', '--untracked-files=all']);
  await step(ctx, 'node test/greet.test.js', process.execPath, ['test/greet.test.js']);
  await step(ctx, 'node src/cli.js Ada', process.execPath, ['src/cli.js', 'Ada']);
  await agentbox(ctx, ['status']);
}

// ── Setup and teardown ──────────────────────────────────────────────────────────────────────────

function writeProject(dir: string): void {
  for (const [file, content] of Object.entries(PROJECT_FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}

/** The first commit, made quietly before the demo starts talking: it is not what the demo shows. */
async function commitProject(ctx: Context): Promise<void> {
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('git', args, {
        cwd: ctx.project,
        env: ctx.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.once('error', reject);
      child.once('close', (code) =>
        code === 0 ? resolve() : reject(new DemoFailure(`git ${args.join(' ')} failed: ${err.trim()}`)),
      );
    });
  await run(['init', '--quiet']);
  await run(['symbolic-ref', 'HEAD', 'refs/heads/main']);
  await run(['config', 'user.name', 'Demo Developer']);
  await run(['config', 'user.email', 'dev@greeter.invalid']);
  await run(['config', 'commit.gpgsign', 'false']);
  await run(['add', '-A']);
  await run(['commit', '--quiet', '-m', 'greeter: say hello']);
}

function parseArgs(argv: string[]): { keep: boolean } {
  const unknown = argv.filter((a) => a !== '--keep');
  if (unknown.length > 0) {
    process.stderr.write(`demo: unknown argument ${unknown[0]}\nusage: tsx scripts/demo.ts [--keep]\n`);
    process.exit(2);
  }
  return { keep: argv.includes('--keep') };
}

async function main(): Promise<number> {
  const { keep } = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist/cli/main.js'))) {
    process.stderr.write('demo: agentbox is not built (no dist/). Run `npm run demo`, which builds first.\n');
    return 1;
  }
  const started = Date.now();
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-demo-')));
  const project = path.join(root, 'greeter');
  const home = path.join(root, 'home');
  fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
  fs.mkdirSync(project);
  const server = await startModelServer(modelScript(), {
    fallback: text('(the demo script has no answer for this request)'),
  });
  const mark = randomBytes(8).toString('hex');
  const env = claudeEnv({
    home: { home, configDir: path.join(home, '.claude'), cleanup: () => {} },
    modelUrl: server.url,
    extra: {
      AGENTBOX_CLAUDE_BIN: CLAUDE_BIN,
      // A test can find every process the demo started by the tag it gave the demo.
      ...(process.env.AGENTBOX_TEST_TAG ? { AGENTBOX_TEST_TAG: process.env.AGENTBOX_TEST_TAG } : {}),
    },
  });
  const ctx: Context = { root, project, home, server, env, mark };

  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    // Ctrl-C reaches the whole foreground group, agentbox included; a SIGTERM sent to the demo
    // alone is passed on, so the run stops cleanly before the demo cleans up.
    if (signal === 'SIGTERM') current?.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let failure: string | undefined;
  try {
    writeProject(project);
    await commitProject(ctx);
    out(
      `${pc.bold('agentbox demo')} — the real agentbox and Claude Code ${pc.dim(`(${path.relative(REPO_ROOT, CLAUDE_BIN)})`)};\n` +
        `only the model is a scripted stand-in ${pc.dim(`(${server.url}, offline)`)}.\n\n` +
        `  project      ${project}  ${pc.dim('(git, one commit; src/greet.js has a bug)')}\n` +
        `  claude home  ${home}  ${pc.dim('(HOME and CLAUDE_CONFIG_DIR: your ~/.claude is not touched)')}\n`,
    );
    await demo(ctx);
  } catch (error) {
    failure = error instanceof DemoFailure ? error.message : String((error as Error)?.stack ?? error);
  } finally {
    await server.close();
    try {
      killWithEnv(MARK_VAR, mark);
    } catch {
      // No /proc (macOS): agentbox's own process groups are all there is.
    }
    if (!keep) fs.rmSync(root, { recursive: true, force: true });
  }

  const total = seconds(Date.now() - started);
  if (failure) {
    out(`\n${pc.red(pc.bold('✗ demo failed'))}: ${failure}\n`);
    if (keep) out(`  kept for a look: ${project}\n            claude home: ${home}\n`);
    else out(`  ${pc.dim('run it again with --keep to look at the project and the runs afterwards')}\n`);
    return interrupted === 'SIGINT' ? 130 : interrupted === 'SIGTERM' ? 143 : 1;
  }
  out(
    `\n${pc.green(pc.bold('✓ demo finished'))} in ${total}: a scout answered from the code, a fix changed an isolated\n` +
      'worktree, and nothing reached the working tree until `agentbox merge`.\n',
  );
  if (keep) {
    out(
      `  kept: ${project}   ${pc.dim('(cd there; agentbox show latest)')}\n` +
        `        ${home}   ${pc.dim('(run agentbox there with HOME and CLAUDE_CONFIG_DIR set to it)')}\n` +
        `  ${pc.dim(`remove both with: rm -rf ${root}`)}\n`,
    );
  }
  return 0;
}

process.exitCode = await main();
