import type { CommandContext } from '../context.js';
import { MAX_ATTEMPTS } from '../group/options.js';
import { startGroup } from '../group/start.js';
import type { RunOptions } from '../run/start.js';
import { HttpError } from './http.js';

/** What `POST /api/runs` asks beyond a plain run when it starts a group. */
export interface GroupAsk {
  readonly attempts: number;
  readonly models?: string[];
  readonly maxParallel?: number;
  readonly firstPass?: boolean;
}

/** A model's name: letters, digits and `.-_:/@[]`, as a `--model` value (no space, no comma). */
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,99}$/;

/** A whole number from 1 to `max`, given as a number or as the form's text; else a 400 naming it. */
function count(body: Record<string, unknown>, key: string, max: number): number | undefined {
  const raw = body[key];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max)
    throw new HttpError(400, `"${key}" must be a whole number from 1 to ${max}, not ${JSON.stringify(raw)}`);
  return n;
}

function modelList(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : null;
  if (items === null || items.some((m) => typeof m !== 'string'))
    throw new HttpError(
      400,
      `"models" must be a comma-separated list of model names, not ${JSON.stringify(raw)}`,
    );
  const names = (items as string[]).map((m) => m.trim()).filter(Boolean);
  const bad = names.find((m) => !MODEL.test(m));
  if (bad !== undefined)
    throw new HttpError(400, `"models" names ${JSON.stringify(bad)}, which is not a model name`);
  if (names.length > MAX_ATTEMPTS)
    throw new HttpError(400, `"models" names ${names.length} models: at most ${MAX_ATTEMPTS}`);
  return names.length > 0 ? names : undefined;
}

/**
 * The group a `POST /api/runs` body asks for, or null for a plain run (no `attempts`, or 1).
 * `models`, `max_parallel` and `first_pass` belong to a group: with one attempt they are a 400,
 * as is a group of anything but fix runs.
 */
export function groupAsk(body: Record<string, unknown>): GroupAsk | null {
  const attempts = count(body, 'attempts', MAX_ATTEMPTS) ?? 1;
  const models = modelList(body.models);
  const maxParallel = count(body, 'max_parallel', MAX_ATTEMPTS);
  if (body.first_pass !== undefined && typeof body.first_pass !== 'boolean')
    throw new HttpError(400, `"first_pass" must be true or false, not ${JSON.stringify(body.first_pass)}`);
  const firstPass = body.first_pass === true;
  if (attempts === 1) {
    const extra = [models && 'models', maxParallel && 'max_parallel', firstPass && 'first_pass'].filter(
      Boolean,
    );
    if (extra.length > 0)
      throw new HttpError(400, `${extra.join(', ')} need "attempts" of 2 or more (a group), not 1`);
    return null;
  }
  if (body.type !== 'fix')
    throw new HttpError(400, `"attempts" is for fix runs only, not ${JSON.stringify(body.type)}`);
  if (models && body.model !== undefined && body.model !== '')
    throw new HttpError(400, 'give "model" or "models", not both');
  return {
    attempts,
    ...(models ? { models } : {}),
    ...(maxParallel ? { maxParallel } : {}),
    ...(firstPass ? { firstPass } : {}),
  };
}

/**
 * Starts the group detached, as `agentbox fix <task> --attempts N --detach --json` (the options
 * were checked above; the CLI's own checks run again, the same way for both).
 */
export function startGroupFromUi(
  ctx: CommandContext,
  task: string,
  options: RunOptions,
  group: GroupAsk,
): Promise<number> {
  return startGroup(ctx, task, {
    ...options,
    attempts: String(group.attempts),
    ...(group.models ? { models: group.models.join(',') } : {}),
    ...(group.maxParallel ? { maxParallel: String(group.maxParallel) } : {}),
    ...(group.firstPass ? { firstPass: true } : {}),
  });
}
