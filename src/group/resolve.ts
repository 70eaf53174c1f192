import { AgentboxError } from '../errors.js';
import { listRunNames } from '../ledger/list.js';
import { isRunName, runIdOf } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { MIN_ID_PREFIX } from '../ledger/resolve.js';
import { listGroupNames } from './store.js';

const ID_PREFIX_RE = /^[0-9a-f]{3,6}$/;

/**
 * The group `ref` names, or null when it names none (then it may name a run): a group's full
 * name, its short id or a unique prefix of it (at least MIN_ID_PREFIX hex), or a unique prefix
 * of its name. Ids are unique across runs and groups, so an id never names both.
 */
export function findGroup(ledger: Ledger, ref: string): string | null {
  const names = listGroupNames(ledger);
  if (names.length === 0) return null;
  if (isRunName(ref)) return names.includes(ref) ? ref : null;
  const id = ref.toLowerCase();
  let matches: string[] = [];
  if (ID_PREFIX_RE.test(id) && id.length >= MIN_ID_PREFIX)
    matches = names.filter((n) => runIdOf(n).startsWith(id));
  else if (ref.length >= 2 && /^\d\d-/.test(ref)) matches = names.filter((n) => n.startsWith(ref));
  // A prefix that names a run too is ambiguous (ids are unique, prefixes are not).
  if (matches.length === 1 && ID_PREFIX_RE.test(id) && id.length < 6) {
    const runs = listRunNames(ledger).filter((n) => runIdOf(n).startsWith(id));
    if (runs.length > 0) matches = [...matches, ...runs];
  }
  if (matches.length > 1) {
    throw new AgentboxError(
      'RUN_AMBIGUOUS',
      `"${ref}" names ${matches.length} groups: ${matches.slice(0, 10).join(', ')}`,
      {
        hint: 'type more of the id',
      },
    );
  }
  return matches[0] ?? null;
}
