import { AgentboxError } from '../errors.js';

/** The most attempts one group may have: each is a claude, a worktree and a sandbox. */
export const MAX_ATTEMPTS = 16;

/** `fix --attempts N` and its companions, as typed. */
export interface GroupFlags {
  readonly attempts?: string;
  /** `--models a,b,…` */
  readonly models?: string;
  readonly maxParallel?: string;
  readonly firstPass?: boolean;
}

/** The flags checked (bad input: an error before anything exists). Pure. */
export interface GroupPlan {
  readonly attempts: number;
  readonly models: readonly string[] | null;
  readonly maxParallel: number;
  readonly firstPass: boolean;
}

function whole(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < min || n > max) {
    throw new AgentboxError('USAGE', `invalid ${flag} "${value}"`, {
      hint: `use a whole number from ${min} to ${max}, e.g. ${flag} ${Math.min(max, 4)}`,
    });
  }
  return n;
}

/** null: a run alone (no --attempts, or --attempts 1 without group flags). */
export function groupPlan(flags: GroupFlags, configuredParallel: number): GroupPlan | null {
  const attempts = flags.attempts === undefined ? 1 : whole('--attempts', flags.attempts, 1, MAX_ATTEMPTS);
  const groupOnly = flags.models !== undefined || flags.maxParallel !== undefined || flags.firstPass === true;
  if (attempts === 1 && !groupOnly) return null;
  if (attempts === 1) {
    throw new AgentboxError('USAGE', '--models, --max-parallel and --first-pass are for several attempts', {
      hint: 'add --attempts N, e.g. agentbox fix "<task>" --attempts 3 --first-pass',
    });
  }
  return {
    attempts,
    models: flags.models === undefined ? null : modelList(flags.models),
    maxParallel:
      flags.maxParallel === undefined
        ? configuredParallel
        : whole('--max-parallel', flags.maxParallel, 1, MAX_ATTEMPTS),
    firstPass: flags.firstPass === true,
  };
}

/** `a,b,…`: names without spaces or control characters (each becomes claude's --model). */
function modelList(text: string): string[] {
  const models = text.split(',').map((m) => m.trim());
  const bad = models.find((m) => m === '' || !/^[A-Za-z0-9][A-Za-z0-9._:@/[\]-]*$/.test(m));
  if (bad !== undefined) {
    throw new AgentboxError(
      'USAGE',
      `invalid --models "${text}": ${bad === '' ? 'an empty name' : `"${bad}"`}`,
      {
        hint: 'name models separated by commas, e.g. --models sonnet,opus',
      },
    );
  }
  return models;
}
