import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { isPointerName, readLinkedRun } from './links.js';
import { listRunNames, listRuns } from './list.js';
import { isRunName, quoteRef, RUN_ID_RE, validateRunRef } from './names.js';
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

/**
 * The run name `ref` stands for: a full name, a short id (6 hex), a unique prefix of a name,
 * `latest`, or a pointer (`last-fail`, `last-done`, `last-review`). Reads only; a ref that could
 * leave runs/ is refused before any file is looked at.
 */
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
  const pointerFile = path.join(ledger.pointersDir, ref);
  if (isPointerName(ref) && (ref.startsWith('last-') || fs.existsSync(pointerFile))) {
    const pointed = readLinkedRun(pointerFile);
    if (pointed && runExists(ledger, pointed)) return pointed;
    const why = pointed ? `points at ${pointed}, which no longer exists` : 'is not set yet';
    throw new AgentboxError('RUN_NOT_FOUND', `pointer ${quoteRef(ref)} ${why} (${pointerFile})`, {
      hint: 'run "agentbox status" to list runs',
    });
  }
  const names = listRunNames(ledger);
  const id = ref.toLowerCase();
  // No name starts with hex-only text (names start "YY-"), so an id and a prefix never mix.
  const matches = RUN_ID_RE.test(id)
    ? names.filter((name) => name.endsWith(`__${id}`))
    : names.filter((name) => name.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const shown = matches.slice(0, SHOWN_CANDIDATES).join('\n    ');
    const more = matches.length > SHOWN_CANDIDATES ? `\n    … ${matches.length - SHOWN_CANDIDATES} more` : '';
    throw new AgentboxError(
      'RUN_AMBIGUOUS',
      `${quoteRef(ref)} matches ${matches.length} runs:\n    ${shown}${more}`,
      {
        hint: 'use more of the name, or the 6-character id at its end',
      },
    );
  }
  throw notFound(ledger, ref);
}
