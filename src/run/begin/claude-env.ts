import path from 'node:path';
import { withNpmRootShim } from '../../sandbox/npm-root.js';
import { agentboxStateDir } from '../../util/state-dir.js';
import type { ExecuteInput } from './input.js';
import type { PreparedRun } from './prepare.js';

/**
 * claude's environment: with its sandbox, an `npm` first on PATH that answers the `npm root -g` its
 * sandbox start asks from a kept answer (0.3 s, src/sandbox/npm-root.ts). Only claude's: the
 * agent's commands (the shim is in the sandbox's denied private area) and runs.verify use the real one.
 */
export async function claudeEnv(input: ExecuteInput, run: PreparedRun): Promise<Record<string, string>> {
  const { privacy } = run.harness;
  if (!privacy.sandbox) return run.launch.env;
  return withNpmRootShim(run.launch.env, {
    dir: path.join(privacy.area.workDir, 'bin'),
    stateDir: agentboxStateDir(input.env),
  });
}
