import path from 'node:path';
import type { RunType } from '../ledger/types.js';
import { type ReadFence, readable, searchReachesDenied } from '../sandbox/read-allowlist.js';
import { directExecution } from './direct.js';
import { LOADING_TOOLS, memoryLinkOnTheWay } from './memory-links.js';
import { canonical, isInside } from './paths.js';

/** Where one run may write and what it may not read. All paths canonical (see `canonical`). */
export interface AirlockScope {
  readonly type: RunType;
  readonly repoRoot: string;
  readonly ledgerDir: string;
  readonly runDir: string;
  /** The fix run's worktree; null for read-only runs. */
  readonly worktree: string | null;
  /**
   * An interactive session: the person's own, so it may write anywhere a person approves — but
   * never in the ledger, and never through the human gate.
   */
  readonly interactive?: boolean;
  /**
   * The run's read fence (its sandbox's denyRead/allowRead, canonical): the Read, Grep and Glob
   * tools run outside the sandbox and ignore it (measured), so the guard applies it to them.
   * Absent: the run has no sandbox.
   */
  readonly reads?: ReadFence;
}

export type DenyRule =
  | 'write-outside-worktree'
  | 'read-only-run'
  | 'ledger'
  | 'human-gate'
  | 'human-only-command'
  | 'direct-execution'
  | 'read-fence'
  | 'memory-link';
export type Verdict =
  | { readonly allow: true }
  | { readonly allow: false; readonly rule: DenyRule; readonly reason: string };

const ALLOW: Verdict = { allow: true };
const WRITE_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);
const READ_TOOLS = new Set(['Read', 'Grep', 'Glob', 'LS', 'NotebookRead']);
const SEARCH_TOOLS = new Set(['Grep', 'Glob', 'LS']);
const HUMAN_GATE = /\bagentbox(?:\.c?js)?["']?\s+(?:merge|discard|apply)\b/;
const HUMAN_ONLY_COMMAND = /(?:^|[:/])(?:merge|apply)_[0-9a-f]{6}$/;

const deny = (rule: DenyRule, reason: string): Verdict => ({
  allow: false,
  rule,
  reason: `agentbox: ${reason}`,
});

function str(input: unknown, ...keys: string[]): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  for (const key of keys) {
    const v = (input as Record<string, unknown>)[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

/** The run may touch this path of the ledger: its own folder, or its worktree when that lives there. */
function ownLedgerPath(scope: AirlockScope, p: string): boolean {
  return isInside(p, scope.runDir) || (scope.worktree !== null && isInside(p, scope.worktree));
}

/**
 * Decides one tool call before it runs (PreToolUse). Pure apart from resolving symlinks. The
 * deny rules passed to Claude Code cover the same ground where its own parser is stronger (Bash
 * redirects); this covers what rules cannot say ("the ledger except my own folder").
 */
export function judgeToolUse(scope: AirlockScope, tool: string, input: unknown, cwd: string): Verdict {
  const loaded = LOADING_TOOLS.has(tool) ? memoryVerdict(scope, tool, input, cwd) : ALLOW;
  if (!loaded.allow) return loaded;
  if (tool === 'Skill' || tool === 'SlashCommand') {
    const name = str(input, 'skill', 'command', 'name')?.replace(/^\//, '').split(/\s/)[0] ?? '';
    return HUMAN_ONLY_COMMAND.test(name)
      ? deny('human-only-command', `/${name} is a human-only command; only a person may run it`)
      : ALLOW;
  }
  if (WRITE_TOOLS.has(tool)) {
    const file = str(input, 'file_path', 'notebook_path', 'path');
    if (!file) return ALLOW;
    const target = canonical(path.resolve(cwd, file));
    if (isInside(target, scope.runDir)) return ALLOW;
    if (scope.interactive) {
      return isInside(target, scope.ledgerDir) && !ownLedgerPath(scope, target)
        ? deny('ledger', `the .agents/ run ledger is agentbox's; a session may not write ${target}`)
        : ALLOW;
    }
    if (scope.worktree === null)
      return deny('read-only-run', `a ${scope.type} run is read-only; it may not write ${target}`);
    if (isInside(target, scope.worktree)) return ALLOW;
    return deny(
      'write-outside-worktree',
      `writes outside the run's worktree are not allowed (${target}); work in ${scope.worktree}`,
    );
  }
  if (READ_TOOLS.has(tool)) {
    const target = canonical(path.resolve(cwd, str(input, 'file_path', 'path', 'notebook_path') ?? '.'));
    if (isInside(target, scope.ledgerDir) && !ownLedgerPath(scope, target)) {
      return deny('ledger', `the .agents/ run ledger is off limits to agents (${target})`);
    }
    return scope.reads ? judgeRead(scope.reads, tool, input, target) : ALLOW;
  }
  if (tool === 'Bash') return judgeBash(scope, str(input, 'command') ?? '', cwd);
  return ALLOW;
}

/**
 * Read, Edit and Write of a file make Claude Code read the CLAUDE.md of its folder and the folders
 * above it in the tree, in its own process: outside the sandbox. A memory file there that is a link
 * leading where the run may not read (an agent's `sub/CLAUDE.md -> ~/.ssh/id_rsa`, then a Read of
 * `sub/f.txt`: measured, the key came back in the Read's result) refuses the call. Only where the
 * run has a read fence: without one, nothing is denied to read anyway.
 */
function memoryVerdict(scope: AirlockScope, tool: string, input: unknown, cwd: string): Verdict {
  const fence = scope.reads;
  const file = str(input, 'file_path', 'notebook_path', 'path');
  if (!fence || !file) return ALLOW;
  const tree = scope.worktree ?? scope.repoRoot;
  const given = path.resolve(cwd, file);
  for (const target of new Set([given, canonical(given)])) {
    const found = memoryLinkOnTheWay(target, tree, (real) => readable(fence, real));
    if (found)
      return deny(
        'memory-link',
        `${found.file} is a link to ${found.real ?? 'a path that does not exist yet'}, which this run may not read; Claude Code would read it itself, outside the sandbox, into this ${tool}'s result`,
      );
  }
  return ALLOW;
}

/**
 * A read tool against the run's read fence: the path it reads (and, for Glob, the fixed start of an
 * absolute pattern) must be readable in the sandbox, and a search must not start above a denied
 * region (Grep from `/` would walk the home).
 */
function judgeRead(fence: ReadFence, tool: string, input: unknown, target: string): Verdict {
  // A Glob pattern may itself leave its folder (`/home/u/**`, `../../**`): where its fixed part leads.
  const pattern = tool === 'Glob' ? str(input, 'pattern') : undefined;
  const fixed = pattern ? pattern.split(/[*?[{]/)[0]! : '';
  const targets = [target, ...(fixed ? [canonical(path.resolve(target, fixed))] : [])];
  for (const t of targets) {
    if (!readable(fence, t) || (SEARCH_TOOLS.has(tool) && searchReachesDenied(fence, t))) {
      return deny(
        'read-fence',
        `reads are denied by default; ${t} is outside what this run may read (its repository but what git ignores there, the toolchains and caches of the allowlist, sandbox.allow_read)`,
      );
    }
  }
  // Grep's `glob` overrides ripgrep's ignore rules; Claude Code then leaves out the denied paths as
  // globs of their own, and one whose name holds a glob character (`app/[slug]/.env.local`) matches
  // other names, not itself: found by QA, such a file's lines came back.
  const hidden = tool === 'Grep' && str(input, 'glob') ? globNamed(fence, target) : undefined;
  if (hidden)
    return deny(
      'read-fence',
      `a Grep with a glob would reach ${hidden}, which this run may not read; search without the glob (or with rg in Bash, which the sandbox fences)`,
    );
  return ALLOW;
}

/** A denied path under `dir` whose name holds a glob character: Claude Code's Grep exclusion misses it. Pure. */
function globNamed(fence: ReadFence, dir: string): string | undefined {
  return fence.denyRead.find(
    (d) => d !== dir && isInside(d, dir) && /[[\]*?{}\\]/.test(path.relative(dir, d)),
  );
}

function judgeBash(scope: AirlockScope, command: string, cwd: string): Verdict {
  if (HUMAN_GATE.test(command)) {
    return deny('human-gate', 'agentbox merge/discard/apply are the human gate; an agent may not run them');
  }
  const direct = scope.interactive ? null : directExecution('Bash', { command }, scope.worktree, false);
  if (direct) {
    return deny(
      'direct-execution',
      `a run may not call Claude Code or a model API itself (${direct}); agentbox supervises every model call`,
    );
  }
  // Every mention of a ledger path, absolute or relative to where the command runs.
  const ledgerRel = path.relative(cwd, scope.ledgerDir);
  const needles = [
    scope.ledgerDir,
    ...(ledgerRel && !ledgerRel.startsWith('..') ? [ledgerRel] : []),
    '.agents',
  ];
  for (const needle of new Set(needles)) {
    let at = command.indexOf(needle);
    while (at >= 0) {
      const end = command.slice(at).search(/[\s'"`;|&<>()]|$/);
      const mentioned = command.slice(at, at + end);
      const resolved = canonical(path.resolve(needle === scope.ledgerDir ? '/' : cwd, mentioned));
      const isLedger = isInside(resolved, scope.ledgerDir) || mentioned.startsWith('.agents');
      if (isLedger && !ownLedgerPath(scope, resolved)) {
        return deny('ledger', `the .agents/ run ledger is off limits to agents (${mentioned})`);
      }
      at = command.indexOf(needle, at + needle.length);
    }
  }
  if (scope.worktree !== null && command.includes(scope.repoRoot)) {
    // Any absolute path into the main working tree that is not the run's own worktree or folder.
    const pattern = new RegExp(`${escapeRegExp(scope.repoRoot)}[^\\s'"\`;|&<>()]*`, 'g');
    for (const match of command.match(pattern) ?? []) {
      const target = canonical(match);
      if (!isInside(target, scope.worktree) && !isInside(target, scope.runDir)) {
        return deny(
          'write-outside-worktree',
          `the main working tree is off limits to a fix run (${match}); work in ${scope.worktree}`,
        );
      }
    }
  }
  return ALLOW;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
