import fs from 'node:fs';
import path from 'node:path';
import { GitError, git, runGit } from '../git/exec.js';
import { isRunName } from '../ledger/names.js';
import type { Ledger } from '../ledger/paths.js';
import { BRANCH_NS } from './refs.js';

/*
 * The remote-tracking copies of run branches: `agentbox fetch` names its refspecs on git's command
 * line, and git then also updates, for each ref it fetched, the ref the remote's configured
 * refspecs map it to (git-fetch(1), "configured remote-tracking branches") — with the default
 * `+refs/heads/*:refs/remotes/origin/*`, `refs/remotes/origin/agentbox/<run>` for every published
 * run branch. `uninstall --purge` removes them, for the remotes agentbox fetched from; the
 * person's own remote-tracking refs stay.
 */

/**
 * The remotes `agentbox fetch` was run with here: each leaves its registry (`.agents/remotes/
 * <remote>.json`) and mirrors into `refs/agentbox/remotes/<remote>/`; either is enough.
 */
export function fetchedRemotes(ledger: Ledger, agentboxRefs: readonly string[]): string[] {
  const names = new Set<string>();
  for (const ref of agentboxRefs) {
    const m = /^refs\/agentbox\/remotes\/([^/]+)\//.exec(ref);
    if (m) names.add(m[1]!);
  }
  let files: string[] = [];
  try {
    files = fs.readdirSync(path.join(ledger.dir, 'remotes'));
  } catch {
    // No ledger, or no fetch yet.
  }
  for (const file of files) {
    const m = /^([A-Za-z0-9][A-Za-z0-9_-]*)(?:\.groups)?\.json$/.exec(file);
    if (m) names.add(m[1]!);
  }
  return [...names].sort();
}

/** One side of a refspec: `refs/heads/*` split at its star (none: an exact ref). */
interface Side {
  readonly head: string;
  readonly tail: string | null;
}

const side = (text: string): Side => {
  const star = text.indexOf('*');
  return star < 0 ? { head: text, tail: null } : { head: text.slice(0, star), tail: text.slice(star + 1) };
};

/** What `ref` stands for under `pattern`: the star's text, '' for an exact match, null for none. */
function starOf(pattern: Side, ref: string): string | null {
  if (pattern.tail === null) return ref === pattern.head ? '' : null;
  if (!ref.startsWith(pattern.head) || !ref.endsWith(pattern.tail)) return null;
  if (ref.length < pattern.head.length + pattern.tail.length) return null;
  return ref.slice(pattern.head.length, ref.length - pattern.tail.length);
}

const fill = (pattern: Side, star: string) =>
  pattern.tail === null ? pattern.head : pattern.head + star + pattern.tail;

/**
 * The run whose branch (`refs/heads/agentbox/<run>` on the remote) the local `ref` is the copy of
 * under a remote's fetch refspecs (`remote.<name>.fetch`, negative ones included); null when it is
 * not one. Pure.
 */
export function trackedRun(refspecs: readonly string[], ref: string): string | null {
  const negative = refspecs.filter((r) => r.startsWith('^')).map((r) => side(r.slice(1)));
  for (const spec of refspecs) {
    if (spec.startsWith('^')) continue;
    const [src, dst] = spec.replace(/^\+/, '').split(':');
    if (!src || !dst) continue;
    const star = starOf(side(dst), ref);
    if (star === null) continue;
    const branch = fill(side(src), star);
    if (negative.some((n) => starOf(n, branch) !== null)) return null;
    const run = branch.startsWith(BRANCH_NS) ? branch.slice(BRANCH_NS.length) : '';
    return isRunName(run) ? run : null;
  }
  return null;
}

/**
 * The remote-tracking copies of run branches in the repository at `root`, under the fetch
 * refspecs of `remotes`: `{ ref, run }`. Refs under refs/heads/ and refs/agentbox/ are left out (a
 * branch and agentbox's own refs are found as such).
 */
export async function trackingCopies(
  root: string,
  remotes: readonly string[],
): Promise<{ ref: string; run: string }[]> {
  if (remotes.length === 0) return [];
  const args = ['config', '--get-regexp', String.raw`^remote\..*\.fetch$`];
  const config = await runGit(args, { cwd: root });
  // Exit 1: no remote has a fetch refspec.
  if (config.exitCode !== 0 && config.exitCode !== 1) throw new GitError(args, { cwd: root }, config);
  const byRemote = new Map<string, string[]>();
  for (const line of config.stdout.split('\n')) {
    const m = /^remote\.(.+)\.fetch (.+)$/.exec(line);
    if (m) byRemote.set(m[1]!, [...(byRemote.get(m[1]!) ?? []), m[2]!]);
  }
  const found = new Map<string, string>();
  for (const remote of remotes) {
    const refspecs = byRemote.get(remote) ?? [];
    const prefixes = refspecs
      .filter((r) => !r.startsWith('^'))
      .map((r) => side(r.split(':')[1] ?? '').head.replace(/[^/]*$/, ''))
      .filter(
        (p) => p.startsWith('refs/') && !p.startsWith('refs/heads/') && !p.startsWith('refs/agentbox/'),
      );
    if (prefixes.length === 0) continue;
    const refs = await git(['for-each-ref', '--format=%(refname)', ...new Set(prefixes)], { cwd: root });
    for (const ref of refs.split('\n').filter(Boolean)) {
      const run = trackedRun(refspecs, ref);
      if (run !== null) found.set(ref, run);
    }
  }
  return [...found].map(([ref, run]) => ({ ref, run }));
}
