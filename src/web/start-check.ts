import { parseMaxCost } from '../budget/budget.js';
import { isAgentboxError } from '../errors.js';
import { maxIterations, supervisorMode, timeoutMs } from '../run/begin/options.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { groupAsk } from './group-start.js';
import { HttpError } from './http.js';

/** One field of `POST /api/runs` that cannot start a run: its name, what is wrong, what to write. */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
  readonly hint?: string;
}

const text = (v: unknown): string | undefined =>
  v === undefined || v === null || v === '' ? undefined : typeof v === 'number' ? String(v) : (v as string);

/** Each check of one field: throws what the CLI would say of it. */
const CHECKS: readonly [string, (body: Record<string, unknown>) => void][] = [
  [
    'task',
    (b) => {
      if (typeof b.task !== 'string' || b.task.trim() === '') throw new HttpError(400, '"task" is empty');
    },
  ],
  ['timeout', (b) => text(b.timeout) !== undefined && timeoutMs(text(b.timeout), '')],
  [
    'supervisor',
    (b) => text(b.supervisor) !== undefined && supervisorMode(text(b.supervisor), 'rules' as SupervisorMode),
  ],
  ['max_iterations', (b) => text(b.max_iterations) !== undefined && maxIterations(text(b.max_iterations), 1)],
  ['max_cost', (b) => text(b.max_cost) !== undefined && parseMaxCost(String(text(b.max_cost)))],
  ['attempts', (b) => groupAsk(b)],
];

/**
 * Every field of a new-run form that is wrong, not only the first (a person fixes them all in one
 * go): each field checked on its own, as startRun and groupAsk check it. Pure.
 */
export function startProblems(body: Record<string, unknown>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, check] of CHECKS) {
    try {
      check(body);
    } catch (error) {
      if (error instanceof HttpError) problems.push({ field, message: error.message });
      else if (isAgentboxError(error))
        problems.push({ field, message: error.message, ...(error.hint ? { hint: error.hint } : {}) });
      else throw error;
    }
  }
  return problems;
}

/** A 400 naming every bad field (`fields` for the page to mark them), or nothing. */
export function assertStartable(body: Record<string, unknown>): void {
  const problems = startProblems(body);
  if (problems.length === 0) return;
  const lines = problems.map((p) => `${p.field}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
  throw new HttpError(
    400,
    problems.length === 1 ? lines[0]! : `${problems.length} fields need a fix:\n${lines.join('\n')}`,
    { fields: problems },
  );
}
