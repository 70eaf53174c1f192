import fs from 'node:fs';
import path from 'node:path';
import { ownPrivateBase, removeRunArea } from '../../src/sandbox/private.js';
import { trustStatus } from '../../src/trust/index.js';
import { writeRecord } from '../../src/trust/store.js';
import { type ModelServer, type Rule, startModelServer } from '../fixtures/model-server/index.js';
import { type BinResult, runAgentbox } from './bin.js';
import { CLAUDE_BIN, type ClaudeHome, claudeEnv, claudeHome } from './claude.js';
import { cleanupLater } from './cleanup.js';
import { gitRepo, type TestRepo } from './git-repo.js';
import { killTagged, newTestTag } from './processes.js';
import { origin } from './remote.js';

/**
 * One end-to-end test project: a real git repository set up with `agentbox init` (committed), a
 * scripted model server, an isolated Claude Code home, and a tag on every process started.
 */
export interface Project {
  readonly repo: TestRepo;
  readonly server: ModelServer;
  readonly home: ClaudeHome;
  readonly tag: string;
  readonly env: Record<string, string>;
  agentbox(
    args: string[],
    options?: { timeoutMs?: number; env?: Record<string, string> },
  ): Promise<BinResult>;
  /** The runs under .agents/runs, oldest first (by started_at: names sort by slug within a minute). */
  runs(): string[];
  newest(): string;
  runDir(name: string): string;
  state(name: string): Record<string, any>;
  read(name: string, file: string): string;
  /** The run's events.jsonl, one object per line. */
  events(name: string): any[];
  cleanup(): Promise<void>;
}

/**
 * The person trusts their own test repository as it is now (src/trust/): what its agentbox.yaml
 * and .claude/ files say takes effect, as it would after `agentbox trust --yes`. Written straight to
 * the project's isolated state folder (under its HOME), so no process is spent on it.
 */
export function trustAsIs(dir: string, env: Record<string, string>): void {
  const status = trustStatus(dir, env);
  if (status.state === 'untrusted' || status.state === 'changed')
    writeRecord(env, status.root, {
      hash: status.hash,
      trusted_at: new Date().toISOString(),
      entries: status.entries,
    });
}

export async function project(
  options: {
    files?: Record<string, string>;
    rules?: Rule[];
    /**
     * false: the repository is left untrusted, as a freshly cloned one (the trust tests). Default:
     * each command first trusts what the repository holds at that moment (see trustAsIs), so the
     * tests that configure runs.* mean what they say.
     */
    trusted?: boolean;
    /** The files are committed in another repository, which is cloned: the project is that clone. */
    cloned?: boolean;
    /** An agentbox other than this checkout's build (an installed package's bin/agentbox.cjs). */
    bin?: string;
    /** A Claude Code other than the devDependency (an installed one). */
    claudeBin?: string;
  } = {},
): Promise<Project> {
  const tag = newTestTag();
  const server = await startModelServer(options.rules ?? []);
  const home = claudeHome();
  const upstream = options.cloned ? origin(options.files ?? {}) : undefined;
  const repo = upstream ? upstream.clone('clone') : gitRepo(options.files ? { files: options.files } : {});
  const env = {
    ...claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag } }),
    AGENTBOX_CLAUDE_BIN: options.claudeBin ?? CLAUDE_BIN,
  };
  let cleaned = false;
  // Registered after the repo and HOME, so it runs before their removal: processes first.
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    killTagged(tag);
    // What a run killed on purpose left of its private area (a crashed run keeps it for its resume,
    // and no watchdog sees this repository again once it is removed).
    try {
      for (const name of fs.readdirSync(path.join(repo.dir, '.agents/runs')))
        removeRunArea(ownPrivateBase(), name);
    } catch {
      // (no ledger: init failed, or the test removed it)
    }
    await server.close();
    home.cleanup();
    repo.cleanup();
    upstream?.cleanup();
  };
  cleanupLater(cleanup);
  const agentbox = (args: string[], o: { timeoutMs?: number; env?: Record<string, string> } = {}) => {
    const runEnv = { ...env, ...o.env };
    if (options.trusted !== false) {
      try {
        trustAsIs(repo.dir, runEnv);
      } catch {
        // A config the test broke on purpose: the command itself reports it.
      }
    }
    return runAgentbox(args, {
      cwd: repo.dir,
      env: runEnv,
      timeoutMs: o.timeoutMs ?? 90_000,
      ...(options.bin ? { bin: options.bin } : {}),
    });
  };
  const init = await agentbox(['init']);
  if (init.code !== 0) throw new Error(`agentbox init failed: ${init.stderr}`);
  repo.commit('agentbox init');
  const runsDir = path.join(repo.dir, '.agents/runs');
  const startedAt = (name: string) =>
    JSON.parse(fs.readFileSync(path.join(runsDir, name, 'state.json'), 'utf8')).started_at;
  // A run folder is claimed before its state.json is written: such a run is not there yet.
  const runs = () =>
    fs
      .readdirSync(runsDir)
      .filter((name) => fs.existsSync(path.join(runsDir, name, 'state.json')))
      .sort((a, b) => startedAt(a).localeCompare(startedAt(b)));
  return {
    repo,
    server,
    home,
    tag,
    env,
    agentbox,
    runs,
    newest: () => runs().at(-1)!,
    runDir: (name) => path.join(runsDir, name),
    state: (name) => JSON.parse(fs.readFileSync(path.join(runsDir, name, 'state.json'), 'utf8')),
    read: (name, file) => fs.readFileSync(path.join(runsDir, name, file), 'utf8'),
    events: (name) =>
      fs
        .readFileSync(path.join(runsDir, name, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    cleanup,
  };
}
