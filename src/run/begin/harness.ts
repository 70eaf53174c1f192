import fs from 'node:fs';
import path from 'node:path';
import type { AirlockScope } from '../../airlock/guard.js';
import { foreignMemoryAbove, startupLinkOut } from '../../airlock/memory-links.js';
import { canonical } from '../../airlock/paths.js';
import type { Config } from '../../config/schema.js';
import { type Endpoint, type HookHandler, startEndpoint } from '../../endpoint/server.js';
import { hookAddressBook } from '../../endpoint/settings.js';
import { AgentboxError } from '../../errors.js';
import type { EventLog } from '../../ledger/events.js';
import { activeRunNames, type Ledger, type RunMeta } from '../../ledger/index.js';
import { prepareRunPrivacy, type RunPrivacy } from '../../sandbox/prepare.js';
import { readable } from '../../sandbox/read-allowlist.js';
import { commandsRoot, removeRunCommands, writeRunCommands } from '../../slash/index.js';
import { createRunHookHandler, type Denial } from '../../supervisor/hooks.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import type { Env } from '../../util/env.js';
import { agentRunDir } from '../end/artifacts.js';
import { endpointProblems } from './endpoint-problems.js';
import { networkRefusals } from './network-refusals.js';

/**
 * What a run holds while it runs, released in reverse order of acquisition: every release runs
 * even when an earlier one throws (the errors are collected and returned), and a second
 * `release()` finds nothing left to do.
 */
export class Releases {
  private readonly stack: (() => unknown)[] = [];

  defer(release: () => unknown): void {
    this.stack.push(release);
  }

  async release(): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (let next = this.stack.pop(); next; next = this.stack.pop()) {
      try {
        await next();
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
}

export interface HarnessInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  /** Where claude runs: a fix run's worktree, the repository, or a session's working directory. */
  readonly launchDir: string;
  /** A fix run's worktree (canonical or not); null for every other run. */
  readonly worktree: string | null;
  /** A person's session: the guard lets them do more (see src/airlock/guard.ts). */
  readonly interactive?: boolean;
  readonly env: Env;
  readonly sandbox: Config['sandbox'];
  readonly log: EventLog;
  readonly supervisor: Supervisor;
  /** Stands between the endpoint and the run's hook handler (a checkpoint at Stop, a session's idle signal). */
  readonly route?: (hooks: HookHandler) => HookHandler;
  readonly onDenial?: (denial: Denial) => void;
  /** The Bash call running now, if one is known: a refusal of agentbox's proxy is tied to it. */
  readonly bashInFlight?: () => string | undefined;
  /** Told as each step is done (the fix-setup bench times them). */
  readonly onStep?: (step: string) => void;
}

/**
 * Who answers the harness's endpoint: the run's log and supervisor and what stands around them.
 * A standby's harness is opened before its revision exists and bound to it when claimed.
 */
export type HarnessBinding = Pick<HarnessInput, 'log' | 'supervisor' | 'route' | 'onDenial' | 'bashInFlight'>;

/** A run's supervision, set up: its slash commands, hook endpoint and private area. */
export interface RunHarness {
  readonly runDir: string;
  readonly scope: AirlockScope;
  readonly endpoint: Endpoint;
  readonly privacy: RunPrivacy;
  /** Writes claude's settings (they carry the endpoint's token) and the hook script's address book. */
  /** The run's settings and hook address book; with `modelKey`, the model key claude reads (secrets.keyFile). */
  writeSecrets(settings: Record<string, unknown>, modelKey?: string | null): void;
  /** Hands the endpoint to another run's supervisor and log (a standby claimed, src/run/standby/). */
  rebind(binding: HarnessBinding): void;
  defer(release: () => unknown): void;
  /** Releases everything in reverse order; returns what failed (safe to call twice). */
  release(): Promise<unknown[]>;
}

/** The guard holds the Read, Grep and Glob tools to the sandbox's read fence (they run outside it). Pure. */
function fencedScope(
  base: AirlockScope,
  box: { readonly denyRead: readonly string[]; readonly allowRead: readonly string[] } | null | undefined,
): AirlockScope {
  if (!box) return base;
  return { ...base, reads: { denyRead: [base.ledgerDir, ...box.denyRead], allowRead: box.allowRead } };
}

/**
 * Sets up what every run (headless or a person's session) needs before claude starts, in order:
 * the run's slash commands, the hook endpoint (the airlock, then the supervisor), the private
 * area. If a step fails, what was set up is released before the error is thrown on.
 */
export async function openRunHarness(input: HarnessInput): Promise<RunHarness> {
  const { ledger, meta } = input;
  const runDir = path.join(ledger.runsDir, meta.run_name);
  const base: AirlockScope = {
    type: meta.type,
    repoRoot: canonical(ledger.root),
    ledgerDir: canonical(ledger.dir),
    runDir: canonical(runDir),
    worktree: input.worktree ? canonical(input.worktree) : null,
    ...(input.interactive ? { interactive: true } : {}),
  };
  const releases = new Releases();
  try {
    writeCommands(input, runDir, releases);
    input.onStep?.('slash commands');
    const privacy = await runPrivacy(input, base.worktree);
    releases.defer(() => privacy.area.dispose());
    input.onStep?.('private area + private git + sandbox paths');
    const scope = fencedScope(base, privacy.sandbox);
    refuseStartupLinks(input, scope);
    // A fenced run that reaches no host but its endpoint gets agentbox's refusing proxy.
    const ownProxy =
      privacy.sandbox !== null && (!base.worktree || input.sandbox.allowed_domains.length === 0);
    let answer = endpointAnswers(input, scope, input);
    const endpoint = await startEndpoint({
      handler: (event, hookInput) => answer.handler(event, hookInput),
      onProblem: (problem) => answer.problems(problem),
      ...(ownProxy ? { onNetworkRefused: (refusal) => answer.refusals(refusal) } : {}),
    });
    releases.defer(() => endpoint.close());
    input.onStep?.('supervisor + endpoint');
    const writeSecrets = (settings: Record<string, unknown>, modelKey?: string | null) => {
      privacy.area.writeSecret('settings.json', `${JSON.stringify(settings)}\n`);
      privacy.area.writeSecret('hook.json', hookAddressBook(endpoint));
      if (modelKey) privacy.area.writeSecret(path.basename(privacy.secrets.keyFile), modelKey);
    };
    return {
      runDir,
      scope,
      endpoint,
      privacy,
      writeSecrets,
      rebind: (binding) => {
        answer = endpointAnswers(input, scope, binding);
      },
      defer: (release) => releases.defer(release),
      release: () => releases.release(),
    };
  } catch (error) {
    await releases.release();
    throw error;
  }
}

/** The run's private area, git and read fence (src/sandbox/prepare.ts). */
function runPrivacy(input: HarnessInput, worktree: string | null): Promise<RunPrivacy> {
  const { ledger, meta } = input;
  return prepareRunPrivacy({
    env: input.env,
    runName: meta.run_name,
    repoRoot: ledger.root,
    worktree,
    // Every headless run's shell is fenced; a person's session asks them instead.
    fenced: !input.interactive,
    config: input.sandbox,
    // The repository's other runs share its sandbox's mount points (src/sandbox/leftovers.ts).
    leftovers: {
      file: path.join(ledger.dir, 'cache', 'sandbox-leftovers'),
      othersRunning: () => activeRunNames(ledger).some((name) => name !== meta.run_name),
    },
  });
}

/**
 * What Claude Code reads by itself when it starts (CLAUDE.md, `.claude/`), in its own process and so
 * outside the sandbox, must not be a link to where the run may not read: a cloned repository's
 * `.claude/skills/x/SKILL.md -> ~/.aws/credentials` was put into every run's system prompt
 * (measured), and an agent's `CLAUDE.md -> ~/.ssh/id_rsa` in its worktree into its revision's.
 * Refused before claude starts, and logged. Only where the run has a read fence.
 */
function refuseStartupLinks(input: HarnessInput, scope: AirlockScope): void {
  const fence = scope.reads;
  if (!fence) return;
  const foreign = foreignMemoryAbove(input.launchDir, process.getuid?.() ?? 0);
  if (foreign) {
    const reason = `${foreign.file} belongs to another user (uid ${foreign.owner}); Claude Code reads it itself when it starts, from a folder above the run's`;
    input.log.append({
      event: 'refused',
      source: 'agentbox',
      tool: 'claude',
      rule: 'memory-foreign',
      reason,
    });
    throw new AgentboxError('PERMISSION_DENIED', reason, {
      hint: `a stranger's instructions, or a link read as you: remove it (or have its owner do so), or keep your repositories out of a folder others can write`,
    });
  }
  const found = startupLinkOut(input.launchDir, (real) => readable(fence, real));
  if (!found) return;
  const reason = `${found.file} is a link to ${found.real ?? 'a path that does not exist yet'}, which this run may not read; Claude Code reads it itself when it starts, outside the sandbox`;
  input.log.append({ event: 'refused', source: 'agentbox', tool: 'claude', rule: 'memory-link', reason });
  throw new AgentboxError('PERMISSION_DENIED', reason, {
    hint: `remove the link (rm ${JSON.stringify(found.file)}); if it is yours and runs may read where it leads, add that to sandbox.allow_read in your own config`,
  });
}

/** What the run's endpoint answers with (its hooks) and where it logs what it refused. */
function endpointAnswers(input: HarnessInput, scope: AirlockScope, bound: HarnessBinding) {
  const hooks = createRunHookHandler({
    scope,
    log: bound.log,
    launchDir: input.launchDir,
    supervisor: bound.supervisor,
    ...(bound.onDenial ? { onDenial: bound.onDenial } : {}),
  });
  return {
    handler: bound.route ? bound.route(hooks) : hooks,
    problems: endpointProblems(bound.log),
    refusals: networkRefusals(bound),
  };
}

/** The run's slash commands in the launch directory; the folders made only to hold them go with them. */
function writeCommands(input: HarnessInput, runDir: string, releases: Releases): void {
  const { launchDir, meta, worktree } = input;
  // The agent's RUN_DIR: its artifact folder in a fix run (inside the worktree), else the ledger folder.
  const spec = {
    runId: meta.run_id,
    runName: meta.run_name,
    type: meta.type,
    runDir: agentRunDir(worktree, runDir),
    worktree,
  };
  if (worktree) fs.mkdirSync(spec.runDir, { recursive: true });
  const created = [path.join(launchDir, '.claude'), commandsRoot(launchDir)].filter((d) => !fs.existsSync(d));
  writeRunCommands(launchDir, spec);
  releases.defer(() => {
    removeRunCommands(launchDir, meta.run_id);
    for (const dir of created.reverse())
      if (fs.existsSync(dir) && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
  });
}
