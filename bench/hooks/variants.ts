/** What the hooks bench compares: the variants (which hooks a session has) and what one run gives. */
import type { Call } from '../hooks-lib.js';

export interface Variant {
  readonly name: string;
  /** The project guard (`.claude/settings.json` with GUARD_GROUP), as `agentbox init` installs it. */
  readonly guard: boolean;
  /** The run's hooks (--settings) and a live endpoint; null: none. */
  readonly run: null | {
    readonly type: 'fix' | 'scout';
    /** planLaunch: exactly what executeRun passes; every: the reference (everyBashCall, history 'hooks'). */
    readonly settings: 'planLaunch' | 'every';
    /**
     * The run's hooks as planLaunch builds them for a run with Claude Code's sandbox on (the
     * default for a fix run) or off (`sandbox.mode: off`). The sandbox block itself is left out:
     * its cost is measured on its own (see SANDBOX_CALLS).
     */
    readonly sandboxed?: boolean;
  };
}
export const VARIANTS: readonly Variant[] = [
  { name: 'none', guard: false, run: null },
  { name: 'project guard', guard: true, run: null },
  { name: 'agentbox fix run', guard: true, run: { type: 'fix', settings: 'planLaunch', sandboxed: true } },
  {
    name: 'fix run, sandbox off',
    guard: true,
    run: { type: 'fix', settings: 'planLaunch', sandboxed: false },
  },
  { name: 'agentbox scout run', guard: true, run: { type: 'scout', settings: 'planLaunch' } },
  { name: 'reference: every hook', guard: true, run: { type: 'fix', settings: 'every' } },
];
export const GATED = VARIANTS[2]!;

export interface Mix {
  readonly name: 'Bash' | 'Read' | 'Write';
  /** The n-th scripted call (0-based). */
  readonly call: (n: number) => Call;
  readonly allowedTools: string;
}

export interface RunResult {
  /** Wall time of the whole process, spawn to exit. */
  readonly ms: number;
  /** CPU (user + system) of claude and everything it waited for. */
  readonly claudeCpuMs: number;
  /** CPU of this process meanwhile: endpoint + stream reader + supervisor (the model server has its own). */
  readonly benchCpuMs: number;
  /** Time spent in the endpoint's handler, summed over the session. */
  readonly handlerMs: number;
  /** Per tool result, in order: was it an error. */
  readonly toolErrors: boolean[];
  /** hook_response lines per event (only with --include-hook-events). */
  readonly hookResponses: Map<string, number>;
  /** Calls the endpoint's handler saw, per event. */
  readonly handled: Map<string, number>;
  /** Refusals by the endpoint, one per refused call. */
  readonly denials: string[];
}
