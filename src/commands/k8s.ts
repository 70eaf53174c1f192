import { randomBytes } from 'node:crypto';
import { parseMaxCost } from '../budget/budget.js';
import { parseDuration } from '../config/duration.js';
import type { CommandContext } from '../context.js';
import { jobManifest } from '../engines/k8s.js';
import { commitOf, isOnRemote, remoteUrl } from '../engines/origin.js';
import { renderYaml } from '../engines/render.js';
import { cloneUrl } from '../engines/repo-url.js';
import { checkSource, sourcePath } from '../engines/source.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { HEADLESS_TYPES, type HeadlessType } from '../run/begin/tier.js';
import { terminalJson } from '../util/json-out.js';
import { VERSION } from '../version.js';

export interface K8sJobOptions {
  readonly image?: string;
  readonly repo?: string;
  readonly commit?: string;
  readonly secret?: string;
  readonly gitSecret?: string;
  readonly gitUser?: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly ttl?: string;
  readonly deadline?: string;
  readonly sandbox?: string;
  readonly model?: string;
  readonly maxCost?: string;
  readonly name?: string;
  readonly json?: boolean;
  /** Install this agentbox at pod start over the image's own (npm spec, tarball or git URL, path). */
  readonly agentboxFrom?: string;
}

/** A Kubernetes quantity, as `--cpu` and `--memory` take it: 500m, 2, 4Gi, 1.5G. */
const QUANTITY_RE = /^(\d+(\.\d+)?|\.\d+)([munkMGTPE]|[KMGTPE]i)?$/;

/** A Job's name is a DNS label: its pods are named after it. */
const NAME_RE = /^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$/;

function usage(what: string, value: string, hint: string): AgentboxError {
  return new AgentboxError('USAGE', `invalid ${what} "${value}"`, { hint });
}

function seconds(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000) throw usage(flag, text, 'use a duration such as 30m, 3h or 2d');
  return Math.round(ms / 1000);
}

function check(type: string, task: string, options: K8sJobOptions, cwd: string): HeadlessType {
  if (!HEADLESS_TYPES.includes(type as HeadlessType))
    throw usage('run type', type, `use one of: ${HEADLESS_TYPES.join(', ')}`);
  if (task.trim() === '' || task.includes('\0'))
    throw usage('task', task, 'say what the run should do, e.g. agentbox k8s job fix "cache the lookup"');
  if (options.name !== undefined && !NAME_RE.test(options.name))
    throw usage('--name', options.name, 'lowercase letters, digits and "-", at most 52 characters');
  const sandbox = options.sandbox ?? 'container';
  if (sandbox !== 'container' && sandbox !== 'required')
    throw usage(
      '--sandbox',
      sandbox,
      'container (the pod is the sandbox) or required (bubblewrap in the pod)',
    );
  if (options.maxCost !== undefined) parseMaxCost(options.maxCost);
  if (options.agentboxFrom !== undefined) checkSource(options.agentboxFrom, cwd);
  for (const [flag, value] of [
    ['--cpu', options.cpu],
    ['--memory', options.memory],
  ] as const)
    if (value !== undefined && !QUANTITY_RE.test(value))
      throw usage(flag, value, 'a Kubernetes quantity, e.g. --cpu 500m or --memory 4Gi');
  return type as HeadlessType;
}

/**
 * `agentbox k8s job <type> "<task>"`: prints a Job manifest that runs the run in a pod and
 * publishes it with --push (`kubectl apply -f -`; afterwards `agentbox fetch`). The repository
 * and commit default to this clone's origin and HEAD.
 */
export async function job(
  ctx: CommandContext,
  type: string,
  task: string,
  options: K8sJobOptions,
): Promise<number> {
  const runType = check(type, task, options, ctx.cwd);
  const repo = await findRepo(ctx.cwd, ctx.env);
  const origin = { root: repo.root, env: ctx.env };
  const clone = cloneUrl(options.repo ?? (await remoteUrl(origin)));
  const commit = await commitOf(origin, options.commit ?? 'HEAD');
  if (clone.note) ctx.io.err(`agentbox: ${clone.note}\n`);
  const local = options.agentboxFrom === undefined ? undefined : sourcePath(options.agentboxFrom);
  if (local !== undefined)
    ctx.io.err(
      `agentbox: --agentbox-from ${local} is a path: the pod reads it in its image, not on this machine\n`,
    );
  if (!(await isOnRemote(origin, commit)))
    ctx.io.err(
      `agentbox: commit ${commit.slice(0, 12)} is on no remote branch: push it first, or the pod cannot check it out\n`,
    );
  const manifest = jobManifest({
    name: options.name ?? `agentbox-${runType}-${randomBytes(3).toString('hex')}`,
    type: runType,
    task,
    image: options.image ?? `agentbox-runner:${VERSION}`,
    repo: clone.url,
    commit,
    secrets: { anthropic: options.secret ?? 'agentbox-anthropic', git: options.gitSecret ?? 'agentbox-git' },
    gitUser: options.gitUser ?? 'x-access-token',
    cpu: options.cpu ?? '2',
    memory: options.memory ?? '4Gi',
    ttlSeconds: seconds('--ttl', options.ttl ?? '1d'),
    deadlineSeconds: seconds('--deadline', options.deadline ?? '3h'),
    sandbox: (options.sandbox ?? 'container') as 'container' | 'required',
    model: options.model,
    budget: options.maxCost,
    agentboxFrom: options.agentboxFrom,
  });
  if (options.json) ctx.io.out(`${terminalJson(manifest, 2)}\n`);
  else
    ctx.io.out(
      renderYaml(
        manifest,
        ` agentbox k8s job (agentbox ${VERSION}): kubectl apply -f - ; when it is done: agentbox fetch`,
      ),
    );
  return 0;
}
