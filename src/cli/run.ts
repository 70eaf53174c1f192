import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import { VERSION } from '../version.js';

/**
 * The watchdog before every command (see src/watchdog/): cheap when nothing is wrong, and never the
 * reason a command fails. AGENTBOX_WATCHDOG=0 turns it off.
 */
async function watch(ctx: CommandContext): Promise<void> {
  if (ctx.env.AGENTBOX_WATCHDOG === '0') return;
  try {
    const { findLedgerRoot, runWatchdog } = await import('../watchdog/watchdog.js');
    const root = findLedgerRoot(ctx.cwd);
    if (!root) return;
    const { ledgerPaths } = await import('../ledger/paths.js');
    const findings = await runWatchdog(ledgerPaths(root), {
      stallMs: () => stallThreshold(ctx, root),
    });
    for (const f of findings) {
      if (f.action === 'crashed' || f.action === 'stalled')
        ctx.io.err(`agentbox: watchdog: run ${f.run} is ${f.action.toUpperCase()}: ${f.detail}\n`);
    }
  } catch (error) {
    ctx.io.err(`agentbox: the watchdog could not check the runs (${(error as Error).message}); going on\n`);
  }
}

/** runs.stall_after from the configuration; loaded only when some heartbeat is old enough to matter. */
async function stallThreshold(ctx: CommandContext, root: string): Promise<number> {
  const { parseDuration } = await import('../config/duration.js');
  const fallback = 5 * 60_000;
  try {
    const { loadConfig } = await import('../config/load.js');
    const { config } = loadConfig({ repoRoot: root, env: ctx.env });
    return parseDuration(config.runs.stall_after) ?? fallback;
  } catch {
    // A broken config is the command's to report; the watchdog keeps the default.
    return fallback;
  }
}

/**
 * Builds the command table. Each command's module is imported only when that command runs, so
 * `agentbox status` never pays for loading the pty or the supervisor.
 */
function buildProgram(ctx: CommandContext, setExit: (code: number) => void): Command {
  const program = new Command('agentbox')
    .description(
      'A git-native supervisor for Claude Code: every run gets a ledger entry, an envelope and a human gate.',
    )
    .version(VERSION, '-v, --version')
    .option('-C, --cwd <dir>', 'run as if agentbox was started in <dir>')
    .showSuggestionAfterError(true)
    // A typo gets its suggestion and one line, not the whole help.
    .showHelpAfterError('(agentbox --help lists the commands; agentbox <command> --help, its options)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ agentbox init                                  set up this repository',
        '  $ agentbox scout "why is login slow?"            a read-only question; the answer is printed',
        '  $ agentbox fix "cache the session lookup"        changes in an isolated worktree',
        '  $ agentbox diff <id>                             review them (git diff, through your pager)',
        '  $ agentbox merge <id>                            you apply them (the human gate)',
        '  $ agentbox status                                the runs, newest first',
      ].join('\n'),
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.out(s), writeErr: (s) => ctx.io.err(s) });

  const withCtx = (): CommandContext => {
    const dir = program.opts<{ cwd?: string }>().cwd;
    return dir ? { ...ctx, cwd: path.resolve(ctx.cwd, dir) } : ctx;
  };
  const lazy =
    <A extends unknown[]>(
      load: () => Promise<(ctx: CommandContext, ...args: A) => Promise<number | undefined>>,
    ) =>
    async (...args: A) => {
      const [action] = await Promise.all([load(), watch(withCtx())]);
      setExit((await action(withCtx(), ...args)) ?? 0);
    };

  program.commandsGroup('Set up:');
  program
    .command('init')
    .description('set up .agents/ and install the Claude Code hooks in this repository')
    .option(
      '--local',
      'install into .claude/settings.local.json (personal, not committed) instead of settings.json',
    )
    .action(lazy(async () => (await import('../commands/init.js')).init));

  program
    .command('uninstall')
    .description('remove exactly what init added; keeps .agents/ (still ignored) unless --purge')
    .option('--purge', "also delete .agents/ and every run's worktree, branch and refs (listed first)")
    .option('--force', 'with --purge: delete runs whose changes were never merged or discarded too')
    .action(lazy(async () => (await import('../commands/uninstall.js')).uninstall));

  program
    .command('doctor')
    .description(
      'check git, the Claude Code binary, the hooks and the config; prints the fix for each failure',
    )
    .option('--json', 'print the checks as JSON')
    .action(lazy(async () => (await import('../commands/doctor.js')).doctor));

  const runCommand = (name: 'scout' | 'plan' | 'fix' | 'review', description: string, argName: string) =>
    program
      .command(name)
      .description(description)
      .argument(`<${argName}>`, `what the run is about, passed to Claude Code verbatim`)
      .option('--json', 'print the outcome as JSON')
      .option('--detach', 'return at once; the run goes on in the background')
      .option('--model <model>', 'the model for this run (default: config claude.model)')
      .option('--timeout <duration>', 'stop the run after this long, e.g. 45m (default: config runs.timeout)')
      .option(
        '--supervisor <mode>',
        'claude | rules | off: who decides at each stop (default: config supervisor.mode)',
      )
      .option(
        '--max-iterations <n>',
        'stops before the run is ended (default: config supervisor.max_iterations)',
      )
      .option(
        '--max-cost <usd>',
        'end the run once it has cost more than this, in USD, e.g. 2.50 (default: config supervisor.max_cost)',
      )
      .option('--push [remote]', 'when the run ends, publish it to the git remote (default: origin)')
      .action(lazy(async () => (await import('../commands/run.js'))[name]));
  program.commandsGroup('Runs:');
  runCommand('scout', 'investigate a question, read-only; the answer goes to report.md', 'question');
  runCommand('plan', 'work out a plan, read-only; it goes to plan.md', 'goal');
  runCommand('fix', 'change code in an isolated git worktree; the result is changes.patch', 'task');
  runCommand('review', 'review code, read-only; the review goes to report.md', 'request');

  const templates = program
    .command('templates')
    .description('the prompt templates each run type gets, and where each comes from')
    .option('--json', 'print them as JSON')
    .action(lazy(async () => (await import('../commands/templates.js')).list));
  templates
    .command('show')
    .description('print the prompt a run would get, without running anything')
    .argument('<type>', 'scout, plan, fix or review')
    .argument('<task>', 'the task, as you would give it to the run')
    .action(lazy(async () => (await import('../commands/templates.js')).show));

  program.commandsGroup('The human gate:');
  program
    .command('diff')
    .description("a fix run's change as git shows it: through your pager, in colour")
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('--stat', 'only the diffstat')
    .option('--name-only', 'only the names of the changed files')
    .option('--color <when>', 'auto (in a terminal), always or never', 'auto')
    .option('--no-pager', 'print straight to the terminal')
    .action(lazy(async () => (await import('../commands/diff.js')).diff));
  program
    .command('merge')
    .description("the human gate: apply a fix run's changes.patch to your working tree")
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--commit', 'commit the merged files with a message made from the task')
    .option('--mark-merged', 'you applied the change yourself: only record the run as merged')
    .option(
      '--allow-sensitive',
      'with --yes, apply sensitive changes too (agent config, git files, CI, hooks, executables, symlinks)',
    )
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/gate.js')).merge));

  program
    .command('discard')
    .description("remove a run's worktree and branch; keeps its folder and patch")
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('--remote [remote]', 'also delete the run from the remote it was published to')
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/gate.js')).discard));

  program.commandsGroup('Runs on other machines:');
  program
    .command('push')
    .description('publish a run through git: its ledger entry on refs/agentbox/runs/<run>, and its branch')
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .argument('[remote]', 'the git remote', 'origin')
    .option('--raw', 'include raw/ (transcripts and logs)')
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/push.js')).push));
  program
    .command('fetch')
    .description('bring the runs published to a git remote into this ledger (status, show, diff, merge)')
    .argument('[remote]', 'the git remote', 'origin')
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/fetch.js')).fetchRemote));

  program.commandsGroup('Run control:');
  program
    .command('resume')
    .description('continue a crashed or aborted run in the same Claude Code session')
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .argument('[instructions]', 'more instructions for the agent')
    .option('--force', "resume even if today's configuration would give the run a different envelope")
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/gate.js')).resume));

  program
    .command('inject')
    .description('queue a message for a live run: its agent gets it at its next stop')
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .argument('<text>', 'the instruction to send, verbatim')
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/gate.js')).inject));

  program
    .command('start')
    .description('an interactive Claude Code session behind agentbox: supervised, restarted after a crash')
    .argument('[task]', 'a first message for claude (optional)')
    .option(
      '--workdir <dir>',
      'where claude runs (default: config interactive.cwd, else the repository root)',
    )
    .option('--resume <run>', 'resume the session of an earlier interactive run')
    .option('--supervisor <mode>', 'claude | rules | off (default: config supervisor.mode)')
    .action(lazy(async () => (await import('../commands/gate.js')).start));

  program
    .command('watch')
    .description("follow a run live (its tool calls, the supervisor's decisions, refusals) until it ends")
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .action(lazy(async () => (await import('../run/watch.js')).watch));

  program
    .command('restart')
    .description('restart claude in a running session')
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('--fresh', 'start a new conversation instead of resuming the session')
    .action(lazy(async () => (await import('../commands/gate.js')).restart));

  program
    .command('stop')
    .description('end a running run or session cleanly: ABORTED, with its patch and report')
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('--force', 'a session: kill claude at once; a run: kill it after 10 s if it has not ended')
    .action(lazy(async () => (await import('../commands/gate.js')).stop));

  program
    .command('state')
    .description("a running session's state: claude's pid, session, restarts, crash policy")
    .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
    .option('--json', 'print machine-readable JSON')
    .action(lazy(async () => (await import('../commands/gate.js')).state));

  program
    .command('recover')
    .description('after a crash or reboot: resume, or roll back and replay, the runs that were running')
    .argument('[run]', 'only this run (a run name, its short id, or "latest")')
    .option('--dry-run', 'print the decisions, change nothing')
    .option('--force', 'resume even if the configuration would now give a run another envelope')
    .option('--json', 'print the decisions and outcomes as JSON')
    .action(lazy(async () => (await import('../recover/recover.js')).recover));

  program.commandsGroup('The ledger:');
  program
    .command('gc')
    .description(
      'remove worktrees and branches of merged and discarded runs; --older-than also old run folders',
    )
    .option(
      '--older-than <duration>',
      'also delete folders of finished runs that ended this long ago, e.g. 30d',
    )
    .option('--dry-run', 'list what would be removed, remove nothing')
    .option('--json', 'print what was removed as JSON')
    .action(lazy(async () => (await import('../run/gc.js')).gc));

  program
    .command('__exec', { hidden: true })
    .argument('<run>')
    .action(lazy(async () => (await import('../commands/run.js')).exec));

  program
    .command('status')
    .description('list runs, newest first')
    .option('--json', 'print machine-readable JSON')
    .option('-a, --all', 'list every run, not only the newest')
    .option('-w, --wide', 'full run names, and the task not cut to the terminal')
    .addOption(new Option('-n, --limit <count>', 'how many runs to list').default('20'))
    .action(lazy(async () => (await import('../commands/status.js')).status));

  program
    .command('show')
    .description('everything about one run')
    .argument('<run>', 'a run name, its short id, "latest" or a pointer such as "last-fail"')
    .option('--json', 'print machine-readable JSON')
    .action(lazy(async () => (await import('../commands/show.js')).show));
  program
    .command('ui')
    .description('a local web dashboard: watch, start, review and merge runs from the browser')
    .option('--port <n>', 'the port to listen on (default: any free port)')
    .option('--host <address>', 'listen on this address instead of 127.0.0.1 (the token is still needed)')
    .option('--no-open', 'print the address, do not open a browser')
    .option('--new-token', 'new secrets: the old address and every logged-in browser stop working')
    .action(lazy(async () => (await import('../commands/ui.js')).ui));

  return program;
}

/** Runs the CLI in-process and returns the exit code. Never calls process.exit. */
export async function run(argv: readonly string[], ctx: CommandContext): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(ctx, (code) => {
    exitCode = code;
  });
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    return report(error, ctx, argv);
  }
}

const TASK_COMMANDS = new Set(['scout', 'plan', 'fix', 'review', 'start']);

function report(error: unknown, ctx: CommandContext, argv: readonly string[]): number {
  if (error instanceof CommanderError) {
    // Commander already printed its message (and the help, and a "Did you mean" suggestion).
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
    if (error.code === 'commander.help') return 0;
    const command = argv.find((a) => !a.startsWith('-'));
    if (error.code === 'commander.unknownOption' && command && TASK_COMMANDS.has(command)) {
      // A task that starts with "-" ("---\n…", "-v is broken") reads as an option.
      ctx.io.err(`  → a task that starts with "-" goes after --: agentbox ${command} -- "<task>"\n`);
    }
    return 2;
  }
  if (isAgentboxError(error)) {
    // A message that already starts with "agentbox …" is not prefixed again.
    ctx.io.err(`${error.message.startsWith('agentbox ') ? '' : 'agentbox: '}${error.message}\n`);
    if (error.hint) ctx.io.err(`  → ${error.hint}\n`);
    return error.exitCode;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  ctx.io.err(
    `agentbox: unexpected error — this is a bug in agentbox ${VERSION}.\n${detail}\n` +
      'Please report it with the command you ran and the output above.\n',
  );
  return 70;
}

export { AgentboxError };
