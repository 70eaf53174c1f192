import { type Command, Option } from 'commander';
import { engines, remote } from './table-remote.js';
import { reviseCommand, runs } from './table-runs.js';
import type { Lazy, Wants } from './table-types.js';

/**
 * The command table: each command's arguments and options, and the module that runs it —
 * `src/commands/<name>.ts`, one per command, named after it — imported only when that command runs,
 * so `agentbox status` never pays for loading the pty or the supervisor. The help lists the
 * commands in the order they are added here.
 */
export function addCommands(program: Command, lazy: Lazy, wants: Wants): void {
  setUp(program, lazy, wants);
  runs(program, lazy, wants);
  templatesCommands(program, lazy, wants);
  humanGate(program, lazy, wants);
  remote(program, lazy, wants);
  continueAndSteer(program, lazy, wants);
  stopAndRecover(program, lazy, wants);
  ledger(program, lazy, wants);
  resident(program, lazy, wants);
  engines(program, lazy, wants);
}

function setUp(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('Set up:');
  if (wants('init'))
    program
      .command('init')
      .description('set up .agents/ and install the Claude Code hooks in this repository')
      .option(
        '--local',
        'install into .claude/settings.local.json (personal, not committed) instead of settings.json',
      )
      .option('--ci <platform>', 'also write a CI pipeline that runs agentbox: github or gitlab (docs/ci.md)')
      .option('--force', 'with --ci: replace a pipeline file agentbox wrote before, or your own')
      .option(
        '--agentbox-from <source>',
        'with --ci: where runners install agentbox from: npm spec, tarball or git URL, absolute path (default: agentbox@<version>, if the registry has it)',
      )
      .action(lazy(async () => (await import('../commands/init.js')).init));

  if (wants('uninstall'))
    program
      .command('uninstall')
      .description('remove exactly what init added; keeps .agents/ (still ignored) unless --purge')
      .option('--purge', "also delete .agents/ and every run's worktree, branch and refs (listed first)")
      .option('--force', 'with --purge: delete runs whose changes were never merged or discarded too')
      .action(lazy(async () => (await import('../commands/uninstall.js')).uninstall));

  if (wants('trust'))
    program
      .command('trust')
      .description(
        "show what this repository's config and Claude Code settings would run or allow, and trust it",
      )
      .option('--yes', 'trust without asking (scripts, CI); the entries are still printed')
      .option('--json', 'print the entries and whether they are trusted, as JSON')
      .option('--revoke', 'take the trust back')
      .action(lazy(async () => (await import('../commands/trust.js')).trust));

  if (wants('doctor'))
    program
      .command('doctor')
      .description(
        'check git, the Claude Code binary, the hooks and the config; prints the fix for each failure',
      )
      .option('--json', 'print the checks as JSON')
      .action(lazy(async () => (await import('../commands/doctor.js')).doctor));
}

function templatesCommands(program: Command, lazy: Lazy, wants: Wants): void {
  if (!wants('templates')) return;
  const templates = program
    .command('templates')
    .description('the prompt templates each run type gets, and where each comes from')
    .option('--json', 'print them as JSON')
    .action(lazy(async () => (await import('../commands/templates.js')).list));
  templates
    .command('show')
    .description('print the prompt a run would get, without running anything')
    .argument('<type>', 'scout, plan, fix, review or interactive (the first task of agentbox start)')
    .argument('<task>', 'the task, as you would give it to the run')
    .action(lazy(async () => (await import('../commands/templates.js')).show));
}

function humanGate(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('The human gate:');
  if (wants('diff'))
    program
      .command('diff')
      .description("a fix run's change as git shows it: through your pager, in colour")
      .argument('<run>', 'a run name, its short id (or a unique prefix of it), "latest", or a group')
      .option('--attempt <k>', "a group: attempt k's change (default: the best-ranked attempt's)")
      .option('--attempts <j,k>', "a group: from attempt j's result to attempt k's")
      .option(
        '--revision <k>',
        "a revised run (agentbox revise): revision k's own change, against revision k-1",
      )
      .option('--stat', 'only the diffstat')
      .option('--name-only', 'only the names of the changed files')
      .option('--color <when>', 'auto (in a terminal), always or never', 'auto')
      .option('--no-pager', 'print straight to the terminal')
      .option('--json', 'the change as JSON: { run, in_progress, base, files, stat, patch }')
      .action(lazy(async () => (await import('../commands/diff.js')).diff));
  if (wants('merge'))
    program
      .command('merge')
      .description("the human gate: apply a fix run's changes.patch to your working tree")
      .argument('<run>', 'a run or group name, its short id (or a unique prefix of it), or "latest"')
      .option('--attempt <k>', "a group's attempt k instead of its best passing one")
      .option('-y, --yes', 'do not ask for confirmation')
      .option(
        '--commit',
        'commit the merged files with a message made from the task (your git hooks do not run)',
      )
      .option('--mark-merged', 'you applied the change yourself: only record the run as merged')
      .option(
        '--allow-sensitive',
        'with --yes, apply sensitive changes too (agent config, git files, CI, hooks, executables, symlinks)',
      )
      .option(
        '--force',
        'with --yes, merge a run that did not pass (not REVIEW, or runs.verify failed), or a fetched run whose claims were not checked here',
      )
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/merge.js')).merge));

  if (wants('discard'))
    program
      .command('discard')
      .description(
        "remove a run's worktree and branch (a group's: every attempt's); keeps its folder and patch",
      )
      .argument('<run>', 'a run or group name, its short id (or a unique prefix of it), or "latest"')
      .option('--remote [remote]', 'also delete the run from the remote it was published to')
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/discard.js')).discard));
}

/** Run control, first half: going on with a run, steering it, following it. */
function continueAndSteer(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('Run control:');
  if (wants('resume'))
    program
      .command('resume')
      .description('continue a crashed or aborted run in the same Claude Code session (or a group, whole)')
      .argument('<run>', 'a run or group name, its short id (or a unique prefix of it), or "latest"')
      .argument('[instructions]', 'more instructions for the agent')
      .option('--force', "resume even if today's configuration would give the run a different envelope")
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/resume.js')).resume));

  reviseCommand(program, lazy, wants);
  if (wants('inject'))
    program
      .command('inject')
      .description('queue a message for a live run: its agent gets it at its next stop')
      .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
      .argument('<text>', 'the instruction to send, verbatim')
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/inject.js')).inject));

  if (wants('start'))
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
      .action(lazy(async () => (await import('../commands/start.js')).start));

  if (wants('watch'))
    program
      .command('watch')
      .description(
        "follow a run live (its tool calls, the supervisor's decisions, refusals) until it ends; a group: every attempt",
      )
      .argument('<run>', 'a run or group name, its short id (or a unique prefix of it), or "latest"')
      .option('--transcript', "the whole transcript as it comes: the agent's text, each call and its result")
      .action(lazy(async () => (await import('../commands/watch.js')).watch));
}

/** Run control, second half: a session's claude, stopping, recovering after a crash. */
function stopAndRecover(program: Command, lazy: Lazy, wants: Wants): void {
  if (wants('restart'))
    program
      .command('restart')
      .description('restart claude in a running session')
      .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
      .option('--fresh', 'start a new conversation instead of resuming the session')
      .action(lazy(async () => (await import('../commands/restart.js')).restart));

  if (wants('stop'))
    program
      .command('stop')
      .description('end a running run or session cleanly: ABORTED, with its patch and report')
      .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
      .option('--force', 'a session: kill claude at once; a run: kill it after 10 s if it has not ended')
      .action(lazy(async () => (await import('../commands/stop.js')).stop));

  if (wants('state'))
    program
      .command('state')
      .description("a running session's state: claude's pid, session, restarts, crash policy")
      .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
      .option('--json', 'print machine-readable JSON')
      .action(lazy(async () => (await import('../commands/state.js')).state));

  if (wants('recover'))
    program
      .command('recover')
      .description('after a crash or reboot: resume, or roll back and replay, the runs that were running')
      .argument('[run]', 'only this run or group (its name, its short id, or "latest")')
      .option('--dry-run', 'print the decisions, change nothing')
      .option('--force', 'resume even if the configuration would now give a run another envelope')
      .option('--json', 'print the decisions and outcomes as JSON')
      .action(lazy(async () => (await import('../commands/recover.js')).recover));
}

function ledger(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('The ledger:');
  if (wants('gc'))
    program
      .command('gc')
      .description(
        'remove worktrees and branches of settled runs (merged, discarded, or a fix with no change); --older-than also old run folders',
      )
      .option(
        '--older-than <duration>',
        'also delete folders of finished runs that ended this long ago, e.g. 30d',
      )
      .option('--dry-run', 'list what would be removed, remove nothing')
      .option('--json', 'print what was removed as JSON')
      .action(lazy(async () => (await import('../commands/gc.js')).gc));

  if (wants('__exec'))
    program
      .command('__exec', { hidden: true })
      .argument('<run>')
      .option('--revision')
      .action(lazy(async () => (await import('../commands/exec.js')).exec));
  if (wants('__exec-group'))
    program
      .command('__exec-group', { hidden: true })
      .argument('<group>')
      .action(lazy(async () => (await import('../commands/exec-group.js')).execGroup));

  if (wants('status'))
    program
      .command('status')
      .description('list runs, newest first')
      .option('--json', 'print machine-readable JSON')
      .option('-a, --all', 'list every run, not only the newest')
      .option('-w, --wide', 'full run names, and the task not cut to the terminal')
      .addOption(new Option('-n, --limit <count>', 'how many runs to list').default('20'))
      .action(lazy(async () => (await import('../commands/status.js')).status));

  if (wants('show'))
    program
      .command('show')
      .description('everything about one run')
      .argument('<run>', 'a run name, its short id, "latest", a pointer such as "last-fail", or a group')
      .option('--json', 'print machine-readable JSON (with --transcript: one entry per line)')
      .option(
        '--transcript',
        'what the agent said and did: text, tool calls and results, refusals, decisions',
      )
      .option('--no-pager', 'with --transcript: print straight to the terminal')
      .action(lazy(async () => (await import('../commands/show.js')).show));
  if (wants('ui'))
    program
      .command('ui')
      .description('a local web dashboard: watch, start, review and merge runs from the browser')
      .option('--port <n>', 'the port to listen on (default: any free port)')
      .option('--host <address>', 'listen on this address instead of 127.0.0.1 (the token is still needed)')
      .option('--no-open', 'print the address, do not open a browser')
      .option('--new-token', 'new secrets: the old address and every logged-in browser stop working')
      .action(lazy(async () => (await import('../commands/ui.js')).ui));
}

function resident(program: Command, lazy: Lazy, wants: Wants): void {
  if (wants('serve'))
    program
      .command('serve')
      .description(
        'the resident agentbox: your scout, plan, review, fix and revise commands run in this warm process, starting faster (docs/resident.md)',
      )
      .option('--idle <duration>', 'stop by itself once no command has run for this long (15m, 2h)')
      .option(
        '--stop',
        'stop the resident agentbox that runs (its runs stop cleanly first), instead of being one',
      )
      .action(lazy(async () => (await import('../commands/serve.js')).serve));
}
