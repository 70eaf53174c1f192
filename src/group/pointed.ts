import type { Ledger } from '../ledger/paths.js';
import { readRun } from '../ledger/read.js';
import { isPointerRef, resolveRun } from '../ledger/resolve.js';
import { attemptGroup } from './merge.js';

/**
 * The group a pointer lands in: `latest` (or a `last-…` pointer) after `fix --attempts N` names
 * the last attempt made, which the person never named — it means its group. `merge latest --yes`
 * took that attempt from a tie and discarded the others; `stop latest` stopped one attempt of
 * three (found by a user's eye). An attempt's own id still means the attempt. Null otherwise.
 */
export function pointedGroup(ledger: Ledger, ref: string): string | null {
  if (!isPointerRef(ref)) return null;
  let name: string;
  try {
    name = resolveRun(ledger, ref);
  } catch {
    return null;
  }
  return attemptGroup(ledger, readRun(ledger, name))?.group.name ?? null;
}
