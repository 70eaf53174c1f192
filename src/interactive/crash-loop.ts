import type { SessionLog } from './log.js';
import {
  type ExitRecord,
  INITIAL_MEMORY,
  onExit,
  onManualRestart,
  type PolicyConfig,
  type PolicyMemory,
  type PolicyState,
} from './policy.js';

export type LaunchMode = 'fresh' | 'resume';

export type SessionOutcome =
  | { readonly kind: 'quit' }
  | { readonly kind: 'stopped'; readonly by: string }
  | { readonly kind: 'aborted'; readonly reason: string }
  | { readonly kind: 'halted'; readonly message: string };

/** What the loop needs from the session around it. */
export interface LoopHost {
  /** Starts claude and resolves once it has exited. */
  launch(mode: LaunchMode, first: boolean): Promise<{ exit: ExitRecord; spawnedAt: number }>;
  /** How the session ends, once something decided that it is to end. */
  ending(): SessionOutcome | null;
  /** A restart agentbox itself asked for (so the exit was expected); taken once. */
  takeRestart(): LaunchMode | null;
  /** Asks the person after a clean exit; true: restart. */
  askRestart(): Promise<boolean>;
  /** Puts claude's exit and the policy's state in the run's state. */
  recordExit(exit: ExitRecord, state: PolicyState): Promise<void>;
}

/**
 * Claude, again and again until the session ends: after every exit the crash policy (policy.ts)
 * says whether claude restarts (resuming its conversation) and after how long, whether the person
 * is asked, or whether the session halts.
 */
export class CrashLoop {
  private memory: PolicyMemory = INITIAL_MEMORY;
  private last: ExitRecord | null = null;

  constructor(
    private readonly policy: PolicyConfig,
    private readonly log: SessionLog,
  ) {}

  get restarts(): number {
    return this.memory.restarts;
  }

  get state(): PolicyState {
    return this.memory.state;
  }

  get lastExit(): ExitRecord | null {
    return this.last;
  }

  /** The person (or agentbox restart) restarted claude: the crash count starts over. */
  manualRestart(): void {
    this.memory = onManualRestart(this.memory);
  }

  async run(host: LoopHost, mode: LaunchMode): Promise<SessionOutcome> {
    for (let first = true; ; first = false) {
      const { exit, spawnedAt } = await host.launch(mode, first);
      this.last = exit;
      const next = await this.afterExit(host, exit, spawnedAt);
      if (typeof next !== 'string') return next;
      mode = next;
    }
  }

  private async afterExit(
    host: LoopHost,
    exit: ExitRecord,
    spawnedAt: number,
  ): Promise<LaunchMode | SessionOutcome> {
    const ending = host.ending();
    if (ending) return ending;
    const restart = host.takeRestart();
    if (restart) {
      this.log.write('user_action', { action: 'restart', mode: restart });
      return restart;
    }
    const { memory, action } = onExit(this.policy, this.memory, exit, spawnedAt);
    this.memory = memory;
    this.log.write('policy', {
      state: memory.state,
      action: action.kind,
      failures: memory.consecutiveFailures,
      delay_ms: action.kind === 'restart' ? action.delayMs : undefined,
    });
    await host.recordExit(exit, memory.state);
    if (action.kind === 'halt') return { kind: 'halted', message: action.message };
    if (action.kind === 'ask') {
      const again = await host.askRestart();
      this.log.write('user_action', { action: again ? 'restart' : 'quit' });
      if (!again) return { kind: 'quit' };
      this.manualRestart();
      return 'resume';
    }
    await new Promise((resolve) => setTimeout(resolve, action.delayMs));
    return host.ending() ?? 'resume';
  }
}
