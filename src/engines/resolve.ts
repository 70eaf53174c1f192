import { AgentboxError } from '../errors.js';
import { spawnOwned } from '../process/owned.js';
import type { Env } from '../util/env.js';
import { defaultSource, SOURCE_EXAMPLES } from './source.js';

/** How long the registry may take to say whether the default exists before init gives up on it. */
const LOOKUP_MS = 15_000;

/** Whether the registry npm is set up to use (its config, .npmrc, npm_config_registry) has `spec`. */
export async function registryHas(spec: string, cwd: string, env: Env): Promise<boolean> {
  let out = '';
  const child = spawnOwned('npm', ['view', spec, 'version', '--json'], {
    cwd,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    onStdout: (chunk) => (out += chunk),
  });
  const timer = setTimeout(() => void child.stop(500), LOOKUP_MS);
  const exit = await child.exited;
  clearTimeout(timer);
  if (exit.code !== 0) return false;
  try {
    // A range answers with a list of versions; an exact version with one string.
    const versions = JSON.parse(out) as unknown;
    return Array.isArray(versions) ? versions.length > 0 : typeof versions === 'string';
  } catch {
    return false;
  }
}

/**
 * The default install source, `agentbox@<version>`, once the registry says it is there; else an
 * error saying what to pass instead (a CI file that installs nothing fails at its first step).
 */
export async function defaultSourceOrStop(
  version: string,
  command: string,
  cwd: string,
  env: Env,
): Promise<string> {
  const spec = defaultSource(version);
  if (await registryHas(spec, cwd, env)) return spec;
  throw new AgentboxError(
    'USAGE',
    `${spec} is not on the npm registry this machine uses (npm view ${spec} found nothing): a runner could not install it`,
    {
      hint: `say where runners install agentbox from: ${command} --agentbox-from <source>, with one of\n  ${SOURCE_EXAMPLES.join('\n  ')}\n(docs/ci.md, "Where runners install agentbox from")`,
    },
  );
}
