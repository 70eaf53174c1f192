import type { Violation, ViolationAction, ViolationType } from '../templates/contract.js';

/** The Stop checks a run has (they are rules: they run in every supervisor mode). */
export interface StopChecks {
  /** The final answer's problems (the output contract); null: no format check. */
  readonly answer: ((text: string) => Promise<Violation[]> | Violation[]) | null;
  /**
   * Runs the project's verification in the worktree (aborting the signal ends it); null: none
   * configured (or not a fix run).
   */
  readonly verify:
    | ((
        signal: AbortSignal,
      ) => Promise<{ readonly ok: boolean; readonly detail: string; readonly duration_ms?: number }>)
    | null;
  readonly actions: Readonly<Record<ViolationType, ViolationAction>>;
  readonly maxCorrections: number;
  /** Every violation is major. */
  readonly failOnViolation: boolean;
  /** false: checked and logged, never enforced (supervisor.enabled: false). */
  readonly enforce: boolean;
  /** Headings of the output contract, for the correction text. */
  readonly requiredSections: readonly string[];
}

export type ViolationVerdict =
  | { readonly kind: 'correct' }
  | { readonly kind: 'fail'; readonly type: ViolationType }
  | { readonly kind: 'logged' };

/**
 * What the supervisor does with the violations of one Stop. Pure. Any major one (configured
 * `fail`, or fail_on_violation) fails the run at once; minor ones are corrected while corrections
 * remain, then fail the run. Not enforced: logged only.
 */
export function judgeViolations(
  checks: Pick<StopChecks, 'actions' | 'maxCorrections' | 'failOnViolation' | 'enforce'>,
  violations: readonly Violation[],
  correctionsSoFar: number,
): ViolationVerdict {
  if (!checks.enforce) return { kind: 'logged' };
  const major = violations.find((v) => checks.failOnViolation || checks.actions[v.type] === 'fail');
  if (major) return { kind: 'fail', type: major.type };
  if (correctionsSoFar < checks.maxCorrections) return { kind: 'correct' };
  return { kind: 'fail', type: violations[0]!.type };
}

/** The failure message of a run ended by a violation, exactly as seed SUP-7 words it. */
export const violationMessage = (type: ViolationType): string => `Supervisor violation: ${type}`;
