import path from 'node:path';
import { terminalExact, terminalName } from '../util/terminal-text.js';
import { type Entry, EXECUTABLE, GITLINK, LINK, parseEntries } from './patch-entries.js';

const GITLINK_DETAIL = 'a submodule commit (mode 160000): merge does not apply it';

/**
 * What a change is, when it is more than code: something that steers agents, git, CI or hooks, or
 * that runs or points somewhere by itself. `git-dir` (a path inside a `.git` folder) is always
 * refused: git apply refuses it too, agentbox does not count on that alone. `uninspected` (a change
 * git would apply that no `diff --git` section names: a bare `---`/`+++` one) is always refused too:
 * what was not inspected is not applied.
 */
export type SensitiveKind =
  | 'git-dir'
  | 'hooks'
  | 'ci'
  | 'agentbox'
  | 'agent-config'
  | 'ledger'
  | 'git-meta'
  | 'executable'
  | 'symlink'
  | 'gitlink'
  | 'uninspected';

export interface SensitiveChange {
  readonly path: string;
  readonly kind: SensitiveKind;
  readonly detail: string;
}

export interface Inspection {
  /** Changes a person must have seen before they land: merge lists them and asks. */
  readonly sensitive: SensitiveChange[];
  /** Changes no flag lets through: a symlink leaving the repository, a path inside `.git`. */
  readonly refused: SensitiveChange[];
}

export interface InspectOptions {
  /** core.hooksPath as git reads it (`git config --path`): relative to the root, or absolute. */
  readonly hooksPath?: string | null;
  /** The symlinks already in the tree (path → target): a new link may point through one. */
  readonly symlinks?: ReadonlyMap<string, string>;
}

// NOTE: every name is compared in lower case. The default file systems of macOS and Windows
// ignore case, so `.Claude/settings.json` there IS `.claude/settings.json`; on Linux it only
// costs a false alarm. Names count at any depth: Claude Code reads CLAUDE.md and .claude/ of
// subfolders, monorepo tools find CI and hook files in packages, and a miss costs more than a flag.
// A folder name also matches a file or symlink of that name (a symlink can replace the folder).
// The first rule that matches names the kind: .githooks/ is `hooks` before it is a `.git*` name.
const RULES: readonly { kind: SensitiveKind; folders?: readonly string[]; names?: RegExp }[] = [
  { kind: 'git-dir', folders: ['.git'] },
  // Every file lefthook reads (yml, yaml, json or toml, and a -local variant), and pre-commit's.
  {
    kind: 'hooks',
    folders: ['.husky', '.githooks'],
    names: /^(\.?lefthook(-local)?\.(ya?ml|json|toml)|\.pre-commit-config\.yaml)$/,
  },
  // .gitlab/ holds the CI files .gitlab-ci.yml includes.
  {
    kind: 'ci',
    folders: ['.github', '.gitlab', '.circleci', '.buildkite'],
    names: /^(\.gitlab-ci\.yml|jenkinsfile|azure-pipelines\.yml|\.travis\.yml)$/,
  },
  { kind: 'agentbox', folders: ['.agentbox'], names: /^agentbox\.yaml$/ },
  // CLAUDE.md and AGENTS.md are instructions every later agent session in the repository follows.
  { kind: 'agent-config', folders: ['.claude'], names: /^(\.mcp\.json|claude(\.local)?\.md|agents\.md)$/ },
  { kind: 'ledger', folders: ['.agents'] },
  // Any other .git* file or folder. .gitkeep is the one no tool reads: flagging it would teach
  // people to pass --allow-sensitive without looking.
  { kind: 'git-meta', names: /^\.git(?!keep$)/ },
];

/** Where a path is sensitive by its name alone (null: it is not). `hooksPath` is relative. Pure. */
export function locationKind(file: string, hooksPath: string | null = null): SensitiveKind | null {
  const lower = file.toLowerCase();
  const segments = lower.split('/');
  const base = segments.at(-1) ?? '';
  for (const { kind, folders, names } of RULES) {
    if (folders && segments.some((s) => folders.includes(s))) return kind;
    if (names && (kind === 'git-meta' ? segments.some((s) => names.test(s)) : names.test(base))) return kind;
    if (kind === 'hooks' && hooksPath && within(lower, hooksPath.toLowerCase())) return kind;
  }
  return null;
}

/** `a` is `b`, inside it, or a folder `b` is in (replacing that folder replaces `b`). */
function within(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * Reads a git patch (as `git diff --binary` writes it) and lists what is sensitive about it and
 * what must be refused. Only headers are read, and for a symlink its new target. A string is
 * taken as text (UTF-8), a Buffer as the patch's bytes. `symlinks` matters twice: a pure rename
 * of a symlink carries no mode in the patch, and a new link may point through an old one. Pure.
 */
export function inspectPatch(
  patch: Buffer | string,
  repoRoot: string,
  options: InspectOptions = {},
): Inspection {
  const existing = new Map([...(options.symlinks ?? [])].map(([file, to]) => [file.toLowerCase(), to]));
  const entries = parseEntries(patch).map((e) => withLinkMode(e, existing));
  const hooksPath = relativeHooksPath(options.hooksPath ?? null, repoRoot);
  const links = linksAfter(entries, existing);
  const sensitive: SensitiveChange[] = [];
  const refused: SensitiveChange[] = [];
  for (const entry of entries) {
    for (const change of locationChanges(entry, hooksPath))
      (change.kind === 'git-dir' ? refused : sensitive).push(change);
    // A gitlink (mode 160000) is a commit of another repository: git apply leaves an empty folder,
    // so it never lands; a person must know that before merging.
    if (entry.newMode === GITLINK || entry.oldMode === GITLINK) {
      const file = entry.newPath ?? entry.oldPath ?? '';
      sensitive.push({ path: file, kind: 'gitlink', detail: GITLINK_DETAIL });
      continue;
    }
    const file = entry.newPath;
    if (file === null) continue;
    if (entry.newMode === EXECUTABLE && (entry.oldMode !== EXECUTABLE || entry.copy)) {
      const detail =
        entry.oldPath === null || entry.copy
          ? `new file, mode ${EXECUTABLE}`
          : `mode ${entry.oldMode} → ${EXECUTABLE}`;
      sensitive.push({ path: file, kind: 'executable', detail });
    }
    if (entry.newMode === LINK) {
      const link = symlinkChange(entry, file, links, repoRoot);
      (link.refuse ? refused : sensitive).push({ path: file, kind: 'symlink', detail: link.detail });
    }
  }
  return { sensitive, refused };
}

/** A rename or copy without a mode line whose source is a known symlink is a symlink. */
function withLinkMode(entry: Entry, existing: ReadonlyMap<string, string>): Entry {
  const moved = entry.oldPath !== null && entry.newPath !== null && entry.oldPath !== entry.newPath;
  if (!moved || entry.newMode !== null || !existing.has(entry.oldPath!.toLowerCase())) return entry;
  return { ...entry, oldMode: LINK, newMode: LINK };
}

/** The sensitive locations an entry touches: a rename counts on both sides. */
function locationChanges(entry: Entry, hooksPath: string | null): SensitiveChange[] {
  const { oldPath, newPath } = entry;
  const before = oldPath === null ? null : locationKind(oldPath, hooksPath);
  const after = newPath === null ? null : locationKind(newPath, hooksPath);
  if (newPath === null) return before && oldPath ? [{ path: oldPath, kind: before, detail: 'deleted' }] : [];
  const verb = entry.copy ? 'copied' : 'renamed';
  const moved = oldPath !== null && oldPath !== newPath;
  const out: SensitiveChange[] = [];
  // A copy leaves its source as it was: only where it lands counts.
  if (moved && before && before !== after && !entry.copy)
    out.push({ path: oldPath, kind: before, detail: `${verb} to ${newPath}` });
  if (after) {
    const detail = oldPath === null ? 'added' : moved ? `${verb} from ${oldPath}` : 'modified';
    out.push({ path: newPath, kind: after, detail: entry.binary ? `${detail} (binary)` : detail });
  }
  return out;
}

/** The tree's symlinks once the patch is in (lower-case paths → targets). */
function linksAfter(entries: Entry[], existing: ReadonlyMap<string, string>): Map<string, string> {
  const links = new Map(existing);
  for (const e of entries) {
    const old = e.oldPath === null ? undefined : links.get(e.oldPath.toLowerCase());
    if (e.oldPath !== null && !e.copy) links.delete(e.oldPath.toLowerCase());
    if (e.newPath === null) continue;
    links.delete(e.newPath.toLowerCase());
    if (e.newMode !== LINK) continue;
    // A moved link with no hunk keeps its target; a link written by the patch has exactly one line.
    const unchanged = e.lines.length === 0 && !e.binary && e.oldMode === LINK ? old : undefined;
    const written = !e.binary && e.lines.length === 1 && e.noNewline ? e.lines[0] : undefined;
    const target = written ?? unchanged;
    if (target !== undefined) links.set(e.newPath.toLowerCase(), target);
  }
  return links;
}

const MAX_HOPS = 40; // Linux's limit on symlinks followed while resolving one path (ELOOP).

function symlinkChange(
  entry: Entry,
  file: string,
  links: ReadonlyMap<string, string>,
  repoRoot: string,
): { refuse: boolean; detail: string } {
  const target = links.get(file.toLowerCase());
  const was = entry.oldMode === LINK && entry.oldPath !== null;
  const what = !was
    ? 'new symlink'
    : entry.oldPath !== file
      ? `symlink moved from ${entry.oldPath}`
      : 'symlink';
  // A target agentbox cannot read (binary, several lines) is not let through on trust.
  if (target === undefined)
    return { refuse: true, detail: `${what}: its target cannot be read from the patch` };
  const shown = `${what} → ${target}`;
  const end = resolveLink(file, target, links);
  if (end.kind === 'absolute') return { refuse: true, detail: `${shown}: an absolute target${end.via}` };
  if (end.kind === 'outside') return { refuse: true, detail: `${shown}: leaves ${repoRoot}${end.via}` };
  if (end.kind === 'git') return { refuse: true, detail: `${shown}: points into .git` };
  return { refuse: false, detail: end.kind === 'loop' ? `${shown} (a symlink loop)` : shown };
}

export interface Resolved {
  readonly kind: 'inside' | 'git' | 'loop' | 'absolute' | 'outside';
  /** For a target that leaves through another link: which one. */
  readonly via: string;
}

/**
 * Follows `target` from the link's folder as the kernel would, through the tree's other symlinks
 * (`links`: lower-case path → target): `a/..` is the link's folder only when `a` is no link.
 * Lexical, no file system. Pure.
 */
export function resolveLink(file: string, target: string, links: ReadonlyMap<string, string>): Resolved {
  if (target.startsWith('/')) return { kind: 'absolute', via: '' };
  const at = file.split('/').slice(0, -1);
  const queue = target.split('/');
  let hops = 0;
  let via = '';
  while (queue.length > 0) {
    const segment = queue.shift()!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (at.pop() === undefined) return { kind: 'outside', via };
      continue;
    }
    at.push(segment);
    const next = links.get(at.join('/').toLowerCase());
    if (next === undefined) continue;
    if (++hops > MAX_HOPS) return { kind: 'loop', via: '' };
    via = ` (through ${at.join('/')} → ${next})`;
    at.pop();
    if (next.startsWith('/')) return { kind: 'absolute', via };
    queue.unshift(...next.split('/'));
  }
  // Any .git on the way: a nested repository's (a submodule's) hooks run too.
  return { kind: at.some((s) => s.toLowerCase() === '.git') ? 'git' : 'inside', via: '' };
}

/** core.hooksPath relative to the root, or null when unset or outside the repository. */
function relativeHooksPath(hooksPath: string | null, repoRoot: string): string | null {
  if (!hooksPath) return null;
  const relative = path.posix.normalize(
    path.isAbsolute(hooksPath) ? path.relative(repoRoot, hooksPath) : hooksPath,
  );
  if (relative === '.' || relative === '..' || relative.startsWith('../') || path.isAbsolute(relative))
    return null;
  return relative.replace(/\/$/, '');
}

/**
 * One aligned line per change (`  path  kind  detail`), for a terminal or an error message. Names
 * come from the agent: shown as they are, escaped (src/util/terminal-text.ts), never sent to the
 * terminal as controls nor stripped of them. Pure.
 */
export function sensitiveLines(changes: readonly SensitiveChange[]): string[] {
  const rows = changes.map((c) => [terminalName(c.path), c.kind, exactLine(c.detail)] as const);
  const pathWidth = Math.max(0, ...rows.map(([p]) => p.length));
  const kindWidth = Math.max(0, ...rows.map(([, k]) => k.length));
  return rows.map(([p, k, d]) => `  ${p.padEnd(pathWidth)}  ${k.padEnd(kindWidth)}  ${d}`);
}

/** A detail (it quotes names: a rename's other side, a link's target) exact, on one line. */
const exactLine = (text: string) => terminalExact(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
