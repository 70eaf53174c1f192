import type { Config } from '../../config/schema.js';
import type { Ledger, RunMeta, RunState } from '../../ledger/index.js';
import type { RunProgress } from '../../present/live.js';
import type { TrustStatus } from '../../trust/index.js';
import type { Env } from '../../util/env.js';
import type { StopReason } from '../end/outcome.js';
import type { RunChecks, SupervisorSettings } from '../supervise.js';
import type { SetupConfig } from './setup-step.js';

/**
 * What one run is started with: its ledger entry, its envelope and its checks. Its own module so
 * that the run's beginning (src/run/begin/prepare.ts) and its middle (src/run/execute.ts) both take it
 * without importing each other.
 */
export interface ExecuteInput {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly state: RunState;
  /** The environment the agent's whitelist is taken from. */
  readonly env: Env;
  readonly claudeBin: string;
  readonly envPass: readonly string[];
  /** The repository's trust (src/trust/): claude loads its settings and MCP servers only when trusted. */
  readonly trust?: TrustStatus;
  /** `sandbox` of the configuration: the kernel boundary of fix runs. */
  readonly sandbox: Config['sandbox'];
  readonly timeoutMs: number;
  /** USD the run may cost, agent and supervisor together; passing it ends the run (ABORTED, budget). */
  readonly maxCostUsd?: number | null;
  readonly supervisor: SupervisorSettings;
  /**
   * Resume the run's session instead of starting it (`more`: extra instructions; `message`: the
   * whole next user turn, a revision's).
   */
  readonly resume?: { readonly more?: string; readonly message?: string };
  /** Start the task again in a new session (after a crash left nothing to resume); `note` says why. */
  readonly replay?: { readonly note: string };
  /** The output contract and the verification (from supervisor.* and runs.verify). */
  readonly checks?: RunChecks;
  /** runs.setup: run in a fix run's worktree before claude first starts there (src/run/begin/setup-step.ts). */
  readonly setup?: SetupConfig | null;
  /** Subscribes to Ctrl-C / SIGTERM; the returned function unsubscribes. */
  readonly onInterrupt?: (stop: (by: string) => void) => () => void;
  readonly onProgress?: (progress: RunProgress) => void;
  /**
   * Gives whoever runs this run (a group, src/group/) a way to end it for a reason of its own (the
   * group's budget); the returned function unsubscribes.
   */
  readonly onHalt?: (halt: (reason: StopReason) => void) => () => void;
  /** Told the run's cost (USD) each time it grows (a group's budget counts every attempt). */
  readonly onSpend?: (usd: number) => void;
  /** Called once claude has started (its start recorded), while claude starts up: work that need not come first. */
  readonly onStarted?: () => Promise<void>;
}
