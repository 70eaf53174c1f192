// The groups of the command table for runs beyond this machine (src/cli/table.ts calls them in help order).
import type { Command } from 'commander';
import type { Lazy, Wants } from './table-types.js';

/** Runs on other machines: published and fetched through git (docs/scaling.md). */
export function remote(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('Runs on other machines:');
  if (wants('push'))
    program
      .command('push')
      .description(
        'publish a run through git: its ledger entry on refs/agentbox/runs/<run>, and its branch (a group: whole)',
      )
      .argument('<run>', 'a run or a group: its name, its short id (or a unique prefix of it), or "latest"')
      .argument('[remote]', 'the git remote', 'origin')
      .option('--raw', 'include raw/ (transcripts and logs)')
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/push.js')).push));
  if (wants('fetch'))
    program
      .command('fetch')
      .description(
        'bring the runs and groups published to a git remote into this ledger (status, show, diff, merge)',
      )
      .argument('[remote]', 'the git remote', 'origin')
      .option('--json', 'print the outcome as JSON')
      .action(lazy(async () => (await import('../commands/fetch.js')).fetchRemote));
}

/** Runs beyond this machine (docs/ci.md): a Kubernetes Job, and what a CI job posts. */
export function engines(program: Command, lazy: Lazy, wants: Wants): void {
  program.commandsGroup('Runs elsewhere:');
  if (wants('k8s')) k8sJob(program, lazy);
  if (wants('ci')) ciSummary(program, lazy);
}

function k8sJob(program: Command, lazy: Lazy): void {
  const k8s = program.command('k8s').description('run agentbox on Kubernetes');
  k8s
    .command('job')
    .description('print a Job manifest that runs one run in a pod and --pushes it (kubectl apply -f -)')
    .argument('<type>', 'scout, plan, fix or review')
    .argument('<task>', 'what the run is about, passed to Claude Code verbatim')
    .option(
      '--image <image>',
      'the runner image (docker/runner/Dockerfile; default: agentbox-runner:<version>)',
    )
    .option('--repo <url>', "the repository to clone (default: origin's URL, over https)")
    .option('--commit <rev>', 'the commit to run on (default: HEAD)')
    .option('--secret <name>', 'the Secret with the API key under "api-key"', 'agentbox-anthropic')
    .option('--git-secret <name>', 'the Secret with a push token under "token"', 'agentbox-git')
    .option('--git-user <name>', 'the user name the push token goes with', 'x-access-token')
    .option('--cpu <quantity>', "the pod's CPU (request and limit)", '2')
    .option('--memory <quantity>', "the pod's memory (request and limit)", '4Gi')
    .option('--ttl <duration>', 'delete the finished Job after this long', '1d')
    .option('--deadline <duration>', 'stop the pod after this long', '3h')
    .option(
      '--sandbox <mode>',
      'container (the pod is the sandbox) or required (bubblewrap in the pod)',
      'container',
    )
    .option('--model <model>', 'the model for this run (default: config claude.model)')
    .option('--max-cost <usd>', 'end the run once it has cost more than this, in USD')
    .option('--name <name>', 'the Job name (default: agentbox-<type>-<random>)')
    .option(
      '--agentbox-from <source>',
      "install this agentbox at pod start over the image's own: npm spec, tarball or git URL, path in the image",
    )
    .option('--json', 'print the manifest as JSON')
    .action(lazy(async () => (await import('../commands/k8s.js')).job));
}

function ciSummary(program: Command, lazy: Lazy): void {
  const ci = program.command('ci').description('what a CI job runs around a run');
  ci.command('summary')
    .description("a run's outcome as Markdown, for the issue comment and the job summary")
    .argument('[run]', 'a run name, its short id, or "latest" (default)')
    .option('--log-url <url>', "the CI job's page, linked from the summary")
    .action(lazy(async () => (await import('../commands/ci.js')).summary));
}
