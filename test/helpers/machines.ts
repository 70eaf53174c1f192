import fs from 'node:fs';
import path from 'node:path';
import { type ModelServer, startModelServer } from '../fixtures/model-server/index.js';
import { type BinResult, runAgentbox } from './bin.js';
import { CLAUDE_BIN, type ClaudeHome, claudeEnv, claudeHome } from './claude.js';
import { GIT_ENV, type TestRepo } from './git-repo.js';
import { killTagged, newTestTag } from './processes.js';
import { type Origin, origin } from './remote.js';

/*
 * Runs beyond one machine: a bare repository plays the team's `origin`; clones of it play CI
 * runners (CI=true, no TTY, the real Claude Code against one scripted model) and a person's
 * laptop, each set up with `agentbox init` (and trust, as every pipeline does: docs/ci.md).
 */

export interface Machine {
  readonly repo: TestRepo;
  run(args: string[], env?: Record<string, string>): Promise<BinResult>;
  /** The runs under .agents/runs that have a state.json. */
  runs(): string[];
  state(name: string): Record<string, any>;
}

export interface Machines {
  readonly world: Origin;
  readonly server: ModelServer;
  readonly tag: string;
  /** A clone named `name`, set up; `extra` joins its environment (e.g. CI=true). */
  machine(name: string, extra?: Record<string, string>): Promise<Machine>;
  cleanup(): Promise<void>;
}

export async function machines(
  files: Record<string, string>,
  options: { timeoutMs?: number; trust?: boolean } = {},
): Promise<Machines> {
  const world = origin(files);
  const server = await startModelServer([]);
  const home: ClaudeHome = claudeHome();
  const tag = newTestTag();
  const machine = async (name: string, extra: Record<string, string> = {}): Promise<Machine> => {
    const repo = world.clone(name);
    const env = {
      ...claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag } }),
      ...GIT_ENV,
      AGENTBOX_CLAUDE_BIN: CLAUDE_BIN,
      AGENTBOX_HOST: `${name}.ci`,
      ...extra,
    };
    const run = (args: string[], more: Record<string, string> = {}) =>
      runAgentbox(args, { cwd: repo.dir, env: { ...env, ...more }, timeoutMs: options.timeoutMs ?? 90_000 });
    const init = await run(['init']);
    if (init.code !== 0) throw new Error(`agentbox init failed: ${init.stderr}`);
    if (options.trust) {
      const trust = await run(['trust', '--yes']);
      if (trust.code !== 0) throw new Error(`agentbox trust failed: ${trust.stderr}`);
    }
    const runsDir = path.join(repo.dir, '.agents/runs');
    return {
      repo,
      run,
      runs: () => fs.readdirSync(runsDir).filter((n) => fs.existsSync(path.join(runsDir, n, 'state.json'))),
      state: (n) => JSON.parse(fs.readFileSync(path.join(runsDir, n, 'state.json'), 'utf8')),
    };
  };
  const cleanup = async () => {
    killTagged(tag);
    await server.close();
    home.cleanup();
    world.cleanup();
  };
  return { world, server, tag, machine, cleanup };
}
