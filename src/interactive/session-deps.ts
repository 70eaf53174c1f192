import type { Terminal } from '../context.js';
import type { Ledger, RunMeta } from '../ledger/index.js';
import type { PtySpawner } from '../process/owned-pty.js';
import type { CwdSource } from './cwd.js';
import type { SessionLog } from './log.js';
import type { PolicyConfig } from './policy.js';

/** How the pieces outside the pty are wired into a session; see start.ts for the real ones. */
export interface SessionDeps {
  readonly ledger: Ledger;
  readonly meta: RunMeta;
  readonly claudeBin: string;
  /** Claude Code's config folder (CLAUDE_CONFIG_DIR, else ~/.claude): where session transcripts live. */
  readonly claudeConfigDir: string;
  readonly cwd: string;
  readonly cwdSource: CwdSource;
  readonly terminal: Terminal;
  readonly policy: PolicyConfig;
  readonly log: SessionLog;
  readonly task?: string | undefined;
  /** The session to resume first (agentbox start --resume); none: a fresh one. */
  readonly resumeSessionId?: string | null;
  /** The argv and env for one claude launch (the run's envelope, hooks and whitelisted env). */
  readonly launch: (mode: { sessionId: string; resume: boolean; prompt?: string | undefined }) => {
    args: string[];
    env: Record<string, string>;
  };
  /** Asks the person after a clean exit; resolves to true for "restart". */
  readonly askRestart: () => Promise<boolean>;
  readonly spawnPty: PtySpawner;
  /** Claude finished a turn and nothing queued goes in: the session waits for the person. */
  readonly onWaiting?: () => void;
  /**
   * The session is being stopped (agentbox stop, a signal): what must let go first, so claude can
   * exit — a supervisor decision under way holds claude's Stop hook until its own timeout.
   */
  readonly onStopping?: () => void;
}
