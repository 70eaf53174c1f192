import type { Command } from 'commander';
import type { Lazy, Wants } from './table-types.js';

/** The four run types; each command module is named after its type. */
const RUN_TYPES = {
  scout: async () => (await import('../commands/scout.js')).scout,
  plan: async () => (await import('../commands/plan.js')).plan,
  fix: async () => (await import('../commands/fix.js')).fix,
  review: async () => (await import('../commands/review.js')).review,
};

/** `scout`, `plan`, `fix` (with its attempts), `review`, and `rerun`: the commands that start a run. */
export function runs(program: Command, lazy: Lazy, wants: Wants): void {
  const runCommand = (
    name: keyof typeof RUN_TYPES,
    description: string,
    argName: string,
    more = (c: Command) => c,
  ) => {
    if (!wants(name)) return;
    const command = program
      .command(name)
      .description(description)
      .argument(`<${argName}>`, `what the run is about, passed to Claude Code verbatim`);
    more(runFlags(command)).action(lazy(RUN_TYPES[name]));
  };
  program.commandsGroup('Runs:');
  runCommand('scout', 'investigate a question, read-only; the answer goes to report.md', 'question');
  runCommand('plan', 'work out a plan, read-only; it goes to plan.md', 'goal');
  runCommand('fix', 'change code in an isolated git worktree; the result is changes.patch', 'task', (c) =>
    c
      .option('--attempts <n>', 'run N attempts side by side, each in its own worktree and sandbox (2-16)')
      .option('--models <list>', 'with --attempts: spread these models over the attempts, e.g. sonnet,opus')
      .option(
        '--max-parallel <k>',
        'with --attempts: at most K at once, the rest wait (default: config runs.max_parallel)',
      )
      .option('--first-pass', 'with --attempts: stop the others as soon as one passes runs.verify'),
  );
  runCommand('review', 'review code, read-only; the review goes to report.md', 'request');
  if (wants('rerun'))
    runFlags(
      program
        .command('rerun')
        .description("start a run's task anew as a new run, with today's templates and configuration")
        .argument('<run>', 'a run name, its short id (or a unique prefix of it), or "latest"')
        .option('--yes', 'a fetched run: start its task without asking (it is still printed)'),
      'rerun',
    ).action(lazy(async () => (await import('../commands/rerun.js')).rerun));
}

/** The flags every run takes; a rerun's defaults are the old run's first (src/run/rerun.ts). */
function runFlags(command: Command, of: 'run' | 'rerun' = 'run'): Command {
  const dflt = (key: string) => (of === 'run' ? `config ${key}` : `the old run's, else config ${key}`);
  return command
    .option('--json', 'print the outcome as JSON')
    .option('--detach', 'return at once; the run goes on in the background')
    .option('--model <model>', `the model for this run (default: ${dflt('claude.model')})`)
    .option(
      '--timeout <duration>',
      `stop the run after this long, e.g. 45m (default: ${dflt('runs.timeout')})`,
    )
    .option(
      '--supervisor <mode>',
      `claude | rules | off: who decides at each stop (default: ${dflt('supervisor.mode')})`,
    )
    .option(
      '--max-iterations <n>',
      `stops before the run is ended (default: ${dflt('supervisor.max_iterations')})`,
    )
    .option(
      '--max-cost <usd>',
      `end the run once it has cost more than this, in USD, e.g. 2.50 (default: ${dflt('supervisor.max_cost')})`,
    )
    .option('--push [remote]', 'when the run ends, publish it to the git remote (default: origin)');
}

/** `agentbox revise`: a fix run in review goes on in its session with the person's review. */
export function reviseCommand(program: Command, lazy: Lazy, wants: Wants): void {
  if (!wants('revise')) return;
  program
    .command('revise')
    .description(
      'request changes to a fix run in review: it goes on in its session, and returns to REVIEW with a new commit',
    )
    .argument(
      '<run>',
      'a run name, its short id (or a unique prefix of it), "latest", or a group with --attempt',
    )
    .argument('[feedback]', 'what to change, verbatim')
    .option('--attempt <k>', "a group's attempt to revise (the others stay as they are)")
    .option(
      '--comment <place-and-text...>',
      'a comment on a line of the change: --comment <file>:<line> "<text>" (repeatable; <file>:-<line>: a line it removed)',
    )
    .option('--edit', 'write the review in $EDITOR, on the change: comments under the lines they are about')
    .option('--detach', 'return at once; the revision goes on in the background')
    .option('--force', "revise even if today's configuration would give the run a different envelope")
    .option('--json', 'print the outcome as JSON')
    .action(lazy(async () => (await import('../commands/revise.js')).revise));
}
