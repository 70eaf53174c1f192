import { AgentboxError } from '../errors.js';
import { VERSION } from '../version.js';

/**
 * Tiny shape checks for the ledger's files. NOTE: not zod — importing zod costs ~40 ms, more
 * than a quarter of the time budget of `agentbox status`.
 */

export class ShapeError extends Error {
  /** The file was written by a newer agentbox: the fix is an upgrade, not a repair. */
  readonly newer: boolean;
  constructor(message: string, newer = false) {
    super(message);
    this.name = 'ShapeError';
    this.newer = newer;
  }
}

export type Obj = Readonly<Record<string, unknown>>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function obj(value: unknown, what: string): Obj {
  if (!isObj(value)) throw new ShapeError(`${what} is not an object`);
  return value;
}

export function str(o: Obj, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new ShapeError(`"${key}" must be a string`);
  return v;
}

export function strOrNull(o: Obj, key: string): string | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new ShapeError(`"${key}" must be a string or null`);
  return v;
}

export function intOrNull(o: Obj, key: string): number | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (!Number.isSafeInteger(v)) throw new ShapeError(`"${key}" must be a whole number or null`);
  return v as number;
}

export function count(o: Obj, key: string): number {
  const v = o[key];
  if (!Number.isSafeInteger(v) || (v as number) < 0)
    throw new ShapeError(`"${key}" must be a whole number ≥ 0`);
  return v as number;
}

/** A number ≥ 0 (an amount of money, a duration); missing reads as 0. */
export function amount(o: Obj, key: string): number {
  const v = o[key] ?? 0;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw new ShapeError(`"${key}" must be a number ≥ 0`);
  return v;
}

export function strList(o: Obj, key: string): string[] {
  const v = o[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    throw new ShapeError(`"${key}" must be a list of strings`);
  }
  return v as string[];
}

export function oneOf<T extends string>(o: Obj, key: string, allowed: readonly T[]): T {
  const v = o[key];
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new ShapeError(`"${key}" must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`);
  }
  return v as T;
}

/** Checks `schema_version` against the versions a reader knows; returns the version found. */
export function schemaVersion(o: Obj, known: number): number {
  const v = o.schema_version;
  if (!Number.isSafeInteger(v) || (v as number) < 1) {
    throw new ShapeError(`"schema_version" is missing or invalid (${JSON.stringify(v)})`);
  }
  if ((v as number) > known) {
    throw new ShapeError(`schema_version ${v} is newer than this agentbox understands (${known})`, true);
  }
  return v as number;
}

/** A damaged or too-new ledger file as an error the user can act on. */
export function corruptFile(file: string, error: unknown): AgentboxError {
  if (error instanceof ShapeError && error.newer) {
    return new AgentboxError('RUN_CORRUPT', `cannot read ${file}: ${error.message}`, {
      hint: `it was written by a newer agentbox than ${VERSION} — upgrade agentbox to read it`,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new AgentboxError('RUN_CORRUPT', `cannot read ${file}: ${message}`, {
    hint: 'the file is damaged — look at it; if it cannot be repaired, move its run folder out of .agents/runs',
    cause: error,
  });
}
