import { AgentboxError } from '../errors.js';
import { spawnOwned } from '../process/owned.js';
import type { Env } from '../util/env.js';
import { defaultSource, SOURCE_EXAMPLES } from './source.js';

/** How long the registry may take to say whether the default exists before init gives up on it. */
const LOOKUP_MS = 15_000;

export interface Lookup {
  readonly found: boolean;
  /** When not found: npm's own reason (E404, ECONNREFUSED…), or that it did not answer in time. */
  readonly why: string;
}

/** Whether the registry npm is set up to use (its config, .npmrc, npm_config_registry) has `spec`. */
export async function registryHas(spec: string, cwd: string, env: Env): Promise<Lookup> {
  let out = '';
  let err = '';
  const child = spawnOwned('npm', ['view', spec, 'version', '--json'], {
    cwd,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    onStdout: (chunk) => (out += chunk),
    onStderr: (chunk) => (err += chunk),
  });
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void child.stop(500);
  }, LOOKUP_MS);
  const exit = await child.exited;
  clearTimeout(timer);
  if (late) return { found: false, why: `npm view ${spec} did not answer within ${LOOKUP_MS / 1000} s` };
  if (exit.spawnError) return { found: false, why: `npm could not be started (${exit.spawnError})` };
  const code = /npm error code (\S+)/.exec(err)?.[1];
  if (exit.code !== 0) return { found: false, why: `npm view ${spec} failed${code ? ` (${code})` : ''}` };
  try {
    // A range answers with a list of versions; an exact version with one string.
    const versions = JSON.parse(out) as unknown;
    const found = Array.isArray(versions) ? versions.length > 0 : typeof versions === 'string';
    return { found, why: found ? '' : `npm view ${spec} found no version` };
  } catch {
    return { found: false, why: `npm view ${spec} answered something that is not JSON` };
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
  const lookup = await registryHas(spec, cwd, env);
  if (lookup.found) return spec;
  throw new AgentboxError(
    'USAGE',
    `${spec} is not on the npm registry this machine uses (${lookup.why}): a runner could not install it`,
    {
      hint: `say where runners install agentbox from: ${command} --agentbox-from <source>, with one of\n  ${SOURCE_EXAMPLES.join('\n  ')}\n(docs/ci.md, "Where runners install agentbox from")`,
    },
  );
}
