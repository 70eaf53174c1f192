import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { closest } from '../util/suggest.js';
import { isPointerName, POINTER_NAMES, readLinkedRun } from './links.js';
import { listRunNames, listRuns } from './list.js';
import { isRunName, quoteRef, runIdOf, validateRunRef } from './names.js';
import type { Ledger } from './paths.js';
import { notFound } from './read.js';

const SHOWN_CANDIDATES = 10;

function runExists(ledger: Ledger, name: string): boolean {
  return fs.existsSync(path.join(ledger.runsDir, name));
}

function noRunsYet(ledger: Ledger): AgentboxError {
  return new AgentboxError('RUN_NOT_FOUND', `there are no runs yet in ${ledger.runsDir}`, {
    hint: 'start one with: agentbox scout "<question>"',
  });
}

/** At least this many hex characters of a short id name a run, as git takes a hash prefix. */
export const MIN_ID_PREFIX = 3;
const ID_PREFIX_RE = /^[0-9a-f]{3,6}$/;

/**
 * The run name `ref` stands for: a full name, a short id (6 hex) or a unique prefix of one (at
 * least 3 hex), a unique prefix of a name, `latest`, or a pointer (`last-fail`, `last-done`,
 * `last-review`, or one of your own in pointers/). A short id always names its run: ids are
 * unique in the ledger and come before pointers of your own. Reads only; a ref that could leave
 * runs/ is refused before any file is looked at.
 */
/** The names resolveRun takes as pointers before any id: `latest` and the `last-…` pointers. Pure. */
export function isPointerRef(ref: string): boolean {
  return ref === 'latest' || (ref.startsWith('last-') && isPointerName(ref));
}

export function resolveRun(ledger: Ledger, ref: string): string {
  validateRunRef(ref);
  if (isRunName(ref)) {
    if (runExists(ledger, ref)) return ref;
    throw notFound(ledger, ref);
  }
  if (ref === 'latest') {
    const linked = readLinkedRun(ledger.latest);
    if (linked && runExists(ledger, linked)) return linked;
    // The link is missing or its run was removed: the newest run is what "latest" means.
    const newest = listRuns(ledger, { limit: 1 }).runs[0]?.name;
    if (newest === undefined) throw noRunsYet(ledger);
    return newest;
  }
  if (ref.startsWith('last-') && isPointerName(ref)) return followPointer(ledger, ref);
  const names = listRunNames(ledger);
  const id = ref.toLowerCase();
  // No name starts with 3 hex characters (names start "YY-"), so an id and a name prefix never mix.
  if (ID_PREFIX_RE.test(id)) {
    const matches = names.filter((name) => runIdOf(name).startsWith(id));
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) throw ambiguous(ref, matches, 'type more of the id');
  }
  if (isPointerName(ref) && fs.existsSync(path.join(ledger.pointersDir, ref)))
    return followPointer(ledger, ref);
  const matches = names.filter((name) => name.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw ambiguous(ref, matches, 'use more of the name, or its short id');
  if (/^[0-9a-f]{1,2}$/.test(id)) {
    throw new AgentboxError('RUN_NOT_FOUND', `no run named ${quoteRef(ref)} in ${ledger.runsDir}`, {
      hint: `a short id needs at least ${MIN_ID_PREFIX} characters — run "agentbox status" to list runs`,
    });
  }
  throw notFound(ledger, ref);
}

function followPointer(ledger: Ledger, ref: string): string {
  const pointerFile = path.join(ledger.pointersDir, ref);
  const pointed = readLinkedRun(pointerFile);
  if (pointed && runExists(ledger, pointed)) return pointed;
  const why = pointed ? `points at ${pointed}, which no longer exists` : 'is not set yet';
  // (a mistyped one of agentbox's own pointers, `last-fial`, is named)
  const near = (POINTER_NAMES as readonly string[]).includes(ref) ? undefined : closest(ref, POINTER_NAMES);
  throw new AgentboxError('RUN_NOT_FOUND', `pointer ${quoteRef(ref)} ${why} (${pointerFile})`, {
    hint: `${near ? `did you mean ${near}? ` : ''}run "agentbox status" to list runs`,
  });
}

/** The candidates by short id and name, newest first, and what to type instead. */
function ambiguous(ref: string, matches: readonly string[], what: string): AgentboxError {
  const shown = matches
    .slice(0, SHOWN_CANDIDATES)
    .map((name) => `${runIdOf(name)}  ${name}`)
    .join('\n    ');
  const more = matches.length > SHOWN_CANDIDATES ? `\n    … ${matches.length - SHOWN_CANDIDATES} more` : '';
  return new AgentboxError(
    'RUN_AMBIGUOUS',
    `${quoteRef(ref)} matches ${matches.length} runs:\n    ${shown}${more}`,
    {
      // Not a command: the one typed takes it (a fixed `agentbox show …` sent a merge to show).
      hint: `${what}, in the same command: e.g. ${runIdOf(matches[0]!)} for the first above`,
    },
  );
}
