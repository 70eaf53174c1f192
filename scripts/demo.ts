/**
 * `npm run demo`: agentbox end to end in about a minute, with no API key and no network.
 *
 * A throwaway git repository with a bug, the real built CLI (`bin/agentbox.cjs`) and the real
 * Claude Code from devDependencies; only the model is a stand-in: the scripted Messages API of
 * test/fixtures/model-server, on 127.0.0.1 and a free port. Claude Code runs with a throwaway HOME
 * and CLAUDE_CONFIG_DIR, so the user's ~/.claude is never read or written.
 *
 *   npx tsx scripts/demo.ts          # run it (npm run demo builds first)
 *   npx tsx scripts/demo.ts --keep   # keep the project and the Claude home, and say where they are
 *
 * Exits 0 when every step worked, 1 with the failing step named otherwise (130/143 on Ctrl-C/SIGTERM).
 * The parts are in scripts/demo/: the project (project.ts), the model's script (model-script.ts),
 * running one step (steps.ts), and the tour of steps (tour.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pc from 'picocolors';
import { startModelServer, text } from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv } from '../test/helpers/claude.js';
import { killWithEnv } from '../test/helpers/processes.js';
import { modelScript } from './demo/model-script.js';
import { commitProject, writeProject } from './demo/project.js';
import { type Context, DemoFailure, live, MARK_VAR, out, REPO_ROOT, seconds } from './demo/steps.js';
import { demo } from './demo/tour.js';

function parseArgs(argv: string[]): { keep: boolean } {
  const unknown = argv.filter((a) => a !== '--keep');
  if (unknown.length > 0) {
    process.stderr.write(`demo: unknown argument ${unknown[0]}\nusage: tsx scripts/demo.ts [--keep]\n`);
    process.exit(2);
  }
  return { keep: argv.includes('--keep') };
}

/** A temp folder with the project and a Claude home, the stand-in model, and the environment for both. */
async function setUp(): Promise<Context> {
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
  return { root, project, home, server, env, mark };
}

/** Runs the tour; the failure it ended with, if any. Removes everything unless asked to keep it. */
async function tour(ctx: Context, keep: boolean): Promise<string | undefined> {
  try {
    writeProject(ctx.project);
    await commitProject(ctx);
    out(
      `${pc.bold('agentbox demo')} — the real agentbox and Claude Code ${pc.dim(`(${path.relative(REPO_ROOT, CLAUDE_BIN)})`)};\n` +
        `only the model is a scripted stand-in ${pc.dim(`(${ctx.server.url}, offline)`)}.\n\n` +
        `  project      ${ctx.project}  ${pc.dim('(git, one commit; src/greet.js has a bug)')}\n` +
        `  claude home  ${ctx.home}  ${pc.dim('(HOME and CLAUDE_CONFIG_DIR: your ~/.claude is not touched)')}\n`,
    );
    await demo(ctx);
    return undefined;
  } catch (error) {
    return error instanceof DemoFailure ? error.message : String((error as Error)?.stack ?? error);
  } finally {
    await ctx.server.close();
    try {
      killWithEnv(MARK_VAR, ctx.mark);
    } catch {
      // No /proc (macOS): agentbox's own process groups are all there is.
    }
    if (!keep) fs.rmSync(ctx.root, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const { keep } = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist/cli/main.cjs'))) {
    process.stderr.write('demo: agentbox is not built (no dist/). Run `npm run demo`, which builds first.\n');
    return 1;
  }
  const started = Date.now();
  const ctx = await setUp();
  const onSignal = (signal: NodeJS.Signals) => {
    if (live.interrupted) return;
    live.interrupted = signal;
    // Ctrl-C reaches the whole foreground group, agentbox included; a SIGTERM sent to the demo
    // alone is passed on, so the run stops cleanly before the demo cleans up.
    if (signal === 'SIGTERM') live.current?.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const failure = await tour(ctx, keep);

  const total = seconds(Date.now() - started);
  if (failure) {
    out(`\n${pc.red(pc.bold('✗ demo failed'))}: ${failure}\n`);
    if (keep) out(`  kept for a look: ${ctx.project}\n            claude home: ${ctx.home}\n`);
    else out(`  ${pc.dim('run it again with --keep to look at the project and the runs afterwards')}\n`);
    return live.interrupted === 'SIGINT' ? 130 : live.interrupted === 'SIGTERM' ? 143 : 1;
  }
  out(
    `\n${pc.green(pc.bold('✓ demo finished'))} in ${total}: a scout answered from the code, a fix changed an isolated\n` +
      'worktree, and nothing reached the working tree until `agentbox merge`.\n',
  );
  if (keep) {
    out(
      `  kept: ${ctx.project}   ${pc.dim('(cd there; agentbox show latest)')}\n` +
        `        ${ctx.home}   ${pc.dim('(run agentbox there with HOME and CLAUDE_CONFIG_DIR set to it)')}\n` +
        `  ${pc.dim(`remove both with: rm -rf ${ctx.root}`)}\n`,
    );
  }
  return 0;
}

process.exitCode = await main();
