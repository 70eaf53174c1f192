import path from 'node:path';
import { CACHE_DIR, CACHE_FILES } from '../ledger/cache.js';
import type { AirlockScope } from './guard.js';
import { isInside } from './paths.js';

export interface TopLevelEntry {
  readonly name: string;
  readonly dir: boolean;
}

/** `//abs/path` is how Claude Code's permission rules spell an absolute path (one slash = relative). */
const abs = (p: string) => `/${p}`;

/**
 * Claude Code deny rules for one run, passed with --settings. They back the PreToolUse guard
 * where Claude Code's own parsing is stronger: an Edit rule also stops Write and Bash redirects
 * into that path. Pure: the caller lists the repository's top-level entries.
 */
export function runDenyRules(scope: AirlockScope, topLevel: readonly TopLevelEntry[]): string[] {
  const ledger = scope.ledgerDir;
  const rules = [
    `Read(${abs(path.join(ledger, 'INDEX.md'))})`,
    `Read(${abs(path.join(ledger, 'INDEX.jsonl'))})`,
    `Read(${abs(path.join(ledger, 'pointers'))}/**)`,
    `Read(${abs(path.join(ledger, 'latest'))}/**)`,
    `Read(${abs(path.join(ledger, 'runs'))}/**)`,
    // Derived from INDEX.jsonl and runs/ (src/ledger/cache.ts): every run's task, so off limits too.
    `Read(${abs(path.join(ledger, CACHE_DIR))}/**)`,
    // The web UI's token and session (src/web/secrets.ts): with them, anything could press merge.
    `Read(${abs(path.join(ledger, 'ui'))}/**)`,
    'Bash(agentbox merge:*)',
    'Bash(agentbox discard:*)',
    'Bash(npx agentbox merge:*)',
    'Bash(npx agentbox discard:*)',
  ];
  if (scope.interactive) {
    // The person's own session writes where they approve, except in the ledger.
    rules.push(`Edit(${abs(ledger)}/**)`);
    return rules;
  }
  if (scope.worktree === null) {
    // A read-only run: nothing in the repository may be written, by any tool or redirect; and no
    // part of the ledger is its to read (another run's worktree under it included), as its
    // sandbox hides the whole ledger from its shell.
    rules.push(`Edit(${abs(scope.repoRoot)}/**)`, `Read(${abs(ledger)}/**)`);
    return rules;
  }
  if (!isInside(scope.worktree, scope.repoRoot)) {
    rules.push(`Edit(${abs(scope.repoRoot)}/**)`);
    return rules;
  }
  // The worktree lives inside the repository (under .agents/), so the main tree is denied entry
  // by entry around it; a rule on the whole root would cover the worktree too, and deny wins.
  // NOTE: no `Edit(//root/*)`: Claude Code matches rules the gitignore way, where `root/*` matching
  // the folder .agents covers everything below it, the worktree included (measured).
  // Nor the entry holding the worktree (`runs.worktree_dir: wt`): its rule would deny the worktree
  // itself (the sandbox takes Edit rules as denyWrite). The sandbox writes only the worktree, and in
  // -p a write tool is refused where it is not pre-approved, so the other worktrees there stay shut.
  const holders = [ledger, scope.worktree].map((p) => path.relative(scope.repoRoot, p).split(path.sep)[0]);
  for (const entry of topLevel) {
    if (holders.includes(entry.name)) continue;
    const target = abs(path.join(scope.repoRoot, entry.name));
    rules.push(entry.dir ? `Edit(${target}/**)` : `Edit(${target})`);
  }
  rules.push(`Edit(${abs(path.join(ledger, 'INDEX.md'))})`, `Edit(${abs(path.join(ledger, 'INDEX.jsonl'))})`);
  for (const file of Object.values(CACHE_FILES))
    rules.push(`Edit(${abs(path.join(ledger, CACHE_DIR, file))})`);
  return rules;
}

/** Characters a permission rule's path holds safely (one invalid rule drops the whole settings file). */
const RULE_SAFE = /^[A-Za-z0-9._/-]+$/;

/**
 * `Read(…)` rules for what a run's read fence denies inside a path it opens (a credential inside an
 * opened folder, `sandbox.deny_read` inside the repository): Claude Code takes a path a Read rule
 * denies out of Grep's and Glob's results, which the guard cannot (it sees only where a search
 * starts). The ledger has its own rules. Pure.
 * NOTE: not a denial with an opening inside it (the worktrees' folder around the run's own
 * worktree): a deny rule beats every allow rule, so it would shut the opening too; the guard holds
 * direct reads there.
 */
export function readFenceRules(scope: AirlockScope): string[] {
  const fence = scope.reads;
  if (!fence) return [];
  return fence.denyRead
    .filter((d) => d !== scope.ledgerDir && RULE_SAFE.test(d))
    .filter((d) => fence.allowRead.some((a) => a !== d && isInside(d, a)))
    .filter((d) => !fence.allowRead.some((a) => a !== d && isInside(a, d)))
    .flatMap((d) => [`Read(${abs(d)})`, `Read(${abs(d)}/**)`]);
}
