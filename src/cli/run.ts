import path from 'node:path';
import { Command, CommanderError } from 'commander';
import type { CommandContext } from '../context.js';
import { AgentboxError, isAgentboxError } from '../errors.js';
import { invokedCommand } from '../util/argv.js';
import { terminalJson } from '../util/json-out.js';
import { terminalText } from '../util/terminal-text.js';
import { VERSION } from '../version.js';
import { findLedgerFolder, findLedgerRoot, watchdogHasWork } from '../watchdog/probe.js';
import { addCommands } from './table.js';

/**
 * The watchdog before every command (see src/watchdog/): cheap when nothing is wrong, and never the
 * reason a command fails. AGENTBOX_WATCHDOG=0 turns it off.
 */
async function watch(ctx: CommandContext): Promise<void> {
  if (ctx.env.AGENTBOX_WATCHDOG === '0') return;
  try {
    const root = findLedgerRoot(ctx.cwd);
    if (!root || !watchdogHasWork(root)) return;
    const { runWatchdog } = await import('../watchdog/watchdog.js');
    const { ledgerPaths } = await import('../ledger/paths.js');
    const findings = await runWatchdog(ledgerPaths(root), {
      stallMs: () => stallThreshold(ctx, root),
    });
    for (const f of findings) {
      if (f.action === 'crashed' || f.action === 'stalled')
        ctx.io.err(
          `agentbox: watchdog: ${f.kind ?? 'run'} ${f.run} is ${f.action.toUpperCase()}: ${f.detail}\n`,
        );
    }
  } catch (error) {
    ctx.io.err(`agentbox: the watchdog could not check the runs (${(error as Error).message}); going on\n`);
  }
}

/**
 * A ledger that came with the repository (git tracks files in `.agents/`), or whose folders are
 * links, is refused before any command, and before the watchdog acts on its runs
 * (src/ledger/carried.ts). A few lstat and one `git ls-files` (~4 ms), only where a `.agents`
 * folder sits beside a `.git`.
 */
async function refuseCarried(ctx: CommandContext): Promise<void> {
  const root = findLedgerFolder(ctx.cwd);
  if (!root) return;
  const { refuseCarriedLedger, refuseLinkedLedger } = await import('../ledger/carried.js');
  refuseLinkedLedger(root);
  await refuseCarriedLedger(root, ctx.env);
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

/** The commands that never read a run's meta.yaml: they do not load the YAML parser for it. */
const WITHOUT_RUN_META = new Set(['status', 'init', 'uninstall', 'trust', 'doctor', 'templates']);

function readsRunMeta(command: string | undefined): boolean {
  return command === undefined || !WITHOUT_RUN_META.has(command);
}

/**
 * The YAML parser a run's meta.yaml is read with, loaded beside the command's own modules: the copy
 * the configuration loads anyway (src/ledger/meta.ts). Without it, the first meta.yaml read loaded a
 * second, CommonJS copy, ~30 ms of every `show`, `diff`, `merge`, `state` and `revise`.
 */
async function loadYaml(): Promise<void> {
  await (await import('../ledger/meta.js')).loadYaml();
}

/**
 * The program: its help, the global options, and the command table (src/cli/table.ts): only the
 * command `only` if given and known, else all of them (the help, a suggestion for a typo).
 */
function buildProgram(ctx: CommandContext, setExit: (code: number) => void, only?: string): Command {
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
      // -C names a folder; anything else is said once, before any command or check looks in it.
      if (program.opts<{ cwd?: string }>().cwd) (await import('../git/repo.js')).checkFolder(withCtx().cwd);
      const checked = refuseCarried(withCtx()).then(() => watch(withCtx()));
      // The command's modules (~50 ms of a run's start, synchronous) load once the check's git has
      // been started, so it runs meanwhile: queued behind the check's own steps, not ahead of them.
      const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(load);
      const [action] = await Promise.all([loaded, checked, readsRunMeta(only) && loadYaml()]);
      setExit((await action(withCtx(), ...args)) ?? 0);
    };

  addCommands(program, lazy, (name) => only === undefined || name === only);
  return only !== undefined && program.commands.length === 0 ? buildProgram(ctx, setExit) : program;
}

/** Runs the CLI in-process and returns the exit code. Never calls process.exit. */
export async function run(argv: readonly string[], ctx: CommandContext): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(
    ctx,
    (code) => {
      exitCode = code;
    },
    invokedCommand(argv),
  );
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
    const misplaced =
      error.code === 'commander.unknownOption' ? argv.findIndex((a) => !a.startsWith('-')) : -1;
    // `agentbox --json status`: only -C/--cwd, --help and --version go before the command.
    const before =
      misplaced > 0
        ? argv.slice(0, misplaced).filter((a) => a.startsWith('--') && !a.startsWith('--cwd'))
        : [];
    if (before.length > 0)
      ctx.io.err(`  → a command's options go after it: agentbox ${command} ${before.join(' ')}\n`);
    if (error.code === 'commander.excessArguments' && command && TASK_COMMANDS.has(command)) {
      // `agentbox scout why is login slow`: the shell split the task into words.
      ctx.io.err(`  → the task is one argument: put it in quotes, agentbox ${command} "<task>"\n`);
    }
    return 2;
  }
  if (isAgentboxError(error)) {
    // A message that already starts with "agentbox …" is not prefixed again. A message may quote
    // what an agent or a repository wrote (a file name, git's stderr, a failure): made safe here.
    const message = terminalText(error.message);
    ctx.io.err(`${message.startsWith('agentbox ') ? '' : 'agentbox: '}${message}\n`);
    if (error.hint) ctx.io.err(`  → ${terminalText(error.hint)}\n`);
    // A script that asked for --json gets the failure as JSON too (stdout held no document yet).
    if (argv.includes('--json')) {
      const failure = {
        code: error.code,
        message: error.message,
        ...(error.hint ? { hint: error.hint } : {}),
      };
      ctx.io.out(`${terminalJson({ error: failure })}\n`);
    }
    return error.exitCode;
  }
  const detail = terminalText(error instanceof Error ? (error.stack ?? error.message) : String(error));
  ctx.io.err(
    `agentbox: unexpected error — this is a bug in agentbox ${VERSION}.\n${detail}\n` +
      'Please report it with the command you ran and the output above.\n',
  );
  return 70;
}

export { AgentboxError };
