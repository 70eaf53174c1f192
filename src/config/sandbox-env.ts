import { AgentboxError } from '../errors.js';
import type { Env } from '../util/env.js';
import type { Config } from './schema.js';

/** The environment variable a CI job or container sets to say what the sandbox is. */
export const SANDBOX_VAR = 'AGENTBOX_SANDBOX';

/**
 * `AGENTBOX_SANDBOX` over `sandbox.mode`: `container` is the explicit opt-out of a job whose
 * container is itself the sandbox (a Kubernetes Job, a GitLab runner's container), `required`
 * keeps Claude Code's sandbox whatever agentbox.yaml says. Read from the environment the CLI was
 * started with, never from a file: a run edits files in its worktree, and its shell cannot change
 * the environment of the agentbox that started it.
 */
export function sandboxFromEnv(sandbox: Config['sandbox'], env: Env): Config['sandbox'] {
  const value = env[SANDBOX_VAR];
  if (value === undefined || value === '') return sandbox;
  if (value === 'container') return { ...sandbox, mode: 'off' };
  if (value === 'required') return { ...sandbox, mode: 'required' };
  throw new AgentboxError('CONFIG_INVALID', `${SANDBOX_VAR}="${value}" is not a sandbox setting`, {
    hint: `use ${SANDBOX_VAR}=container (the container is the sandbox) or ${SANDBOX_VAR}=required, or unset it to follow agentbox.yaml`,
  });
}

/** Who turned a fix run's sandbox off, as its events.jsonl and `agentbox show` say it. */
export function sandboxOffBy(env: Env): string {
  return env[SANDBOX_VAR] === 'container' ? `${SANDBOX_VAR}=container` : 'sandbox.mode: off';
}
