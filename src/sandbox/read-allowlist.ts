import path from 'node:path';

/**
 * What a run may read of the person's home: the one table docs/security.md quotes (a test compares
 * them). Reads are denied by default: the home (and Claude Code's config dir, the XDG folders, every
 * run's work) is a denied region, and only these paths are opened again, read-only, for the run's
 * shell and for `runs.setup`/`runs.verify`: the toolchains and caches a build needs, never a
 * credential. A person widens it in their own config (`sandbox.allow_read`); a repository that sets
 * that key needs trust.
 * `path` is relative to the home; a path under `.cache/`, `.config/`, `.local/share/` or
 * `.local/state/` follows `XDG_CACHE_HOME`, `XDG_CONFIG_HOME`, `XDG_DATA_HOME` or `XDG_STATE_HOME`
 * when set (see `homePath`).
 * NOTE: a folder is listed only when nothing in it holds a credential: `.cargo/registry`, not
 * `.cargo` (credentials.toml); `.m2/repository`, not `.m2` (settings.xml); `go/pkg`, not `go`
 * (old GOPATH checkouts of other repositories in go/src).
 */
export interface ReadAllowRow {
  readonly path: string;
  readonly for: string;
}

export const READ_ALLOWLIST: readonly ReadAllowRow[] = [
  // Node
  { path: '.npm', for: "npm's cache (`npm ci` from a warm cache), npx" },
  { path: '.cache/yarn', for: 'yarn 1 cache' },
  { path: '.yarn/berry', for: 'yarn 2+ global cache' },
  { path: '.cache/pnpm', for: "pnpm's metadata cache" },
  { path: '.local/share/pnpm', for: "pnpm's store and global bin" },
  { path: '.nvm', for: 'nvm: node versions' },
  { path: '.fnm', for: 'fnm: node versions' },
  { path: '.local/share/fnm', for: 'fnm: node versions' },
  { path: '.local/state/fnm_multishells', for: 'fnm: the per-shell links on PATH' },
  { path: '.volta', for: 'volta: node and tools' },
  { path: '.nodenv', for: 'nodenv: node versions' },
  { path: '.bun', for: 'bun and its install cache' },
  { path: '.deno', for: 'deno' },
  { path: '.cache/deno', for: "deno's module cache" },
  { path: '.cache/node-gyp', for: 'node headers for native addons' },
  { path: '.cache/ms-playwright', for: "playwright's browsers" },
  { path: '.cache/puppeteer', for: "puppeteer's browsers" },
  { path: '.cache/Cypress', for: "Cypress's binary" },
  // Rust
  { path: '.rustup', for: 'rustup: toolchains' },
  { path: '.cargo/bin', for: 'cargo and installed tools' },
  { path: '.cargo/registry', for: 'crates (not credentials.toml)' },
  { path: '.cargo/git', for: 'git dependencies of crates' },
  // Python
  { path: '.pyenv', for: 'pyenv: python versions and virtualenvs' },
  { path: '.local/lib', for: 'user site-packages (pip --user)' },
  { path: '.local/bin', for: 'user scripts (pip --user, pipx, uv tool)' },
  { path: '.local/share/uv', for: 'uv: pythons and tools' },
  { path: '.cache/uv', for: "uv's cache" },
  { path: '.cache/pip', for: "pip's cache" },
  { path: '.cache/pypoetry', for: "poetry's cache and virtualenvs" },
  { path: '.local/share/virtualenvs', for: "pipenv's virtualenvs" },
  { path: '.local/pipx', for: 'pipx: tools' },
  { path: '.local/share/pipx', for: 'pipx: tools' },
  { path: '.cache/pre-commit', for: "pre-commit's hook environments" },
  { path: '.conda', for: 'conda: environments' },
  { path: 'miniconda3', for: 'conda' },
  { path: 'miniforge3', for: 'conda' },
  { path: 'anaconda3', for: 'conda' },
  // Go
  { path: 'go/pkg', for: 'Go modules (GOPATH)' },
  { path: 'go/bin', for: 'installed Go tools' },
  { path: 'sdk', for: 'Go versions (golang.org/dl)' },
  { path: '.cache/go-build', for: "Go's build cache" },
  { path: '.cache/golangci-lint', for: "golangci-lint's cache" },
  // JVM
  { path: '.m2/repository', for: 'Maven artifacts (not settings.xml)' },
  { path: '.m2/wrapper', for: 'Maven wrapper' },
  { path: '.gradle/caches', for: 'Gradle artifacts (not gradle.properties)' },
  { path: '.gradle/wrapper', for: 'Gradle wrapper' },
  { path: '.sdkman/candidates', for: 'sdkman: JDKs and tools' },
  { path: '.jdks', for: 'JDKs' },
  { path: '.cache/coursier', for: 'Scala artifacts' },
  // Ruby
  { path: '.rbenv', for: 'rbenv: ruby versions' },
  { path: '.gem/ruby', for: 'gems (not .gem/credentials)' },
  { path: '.local/share/gem', for: 'gems' },
  // Several languages
  { path: '.asdf', for: 'asdf: versions and shims' },
  { path: '.tool-versions', for: "asdf's global versions" },
  { path: '.local/share/mise', for: 'mise: versions and shims' },
  { path: '.cache/mise', for: "mise's cache" },
  { path: '.nix-profile', for: 'Nix profile on PATH' },
  // git (not ~/.gitconfig, which may hold a token: a run's git gets its own, src/sandbox/run-gitconfig.ts)
  { path: '.config/git/ignore', for: "git's global ignore file" },
  { path: '.config/git/attributes', for: "git's global attributes" },
];

/**
 * Places that stay denied even inside a path the person opens (`sandbox.allow_read: [~/.config]`):
 * credentials of clouds, registries, git hosts, ssh and Claude Code itself, relative to HOME.
 * NOTE: a second line, never the first: reads are denied by default, so a credential missing here
 * is still unreadable unless the person opened a folder holding it.
 */
export const HOME_SECRETS: readonly string[] = [
  '.ssh',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.docker',
  '.kube',
  '.gnupg',
  '.password-store',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.config/git/credentials',
  '.gitconfig',
  '.config/git/config',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d',
  '.gem/credentials',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  '.claude',
  '.claude.json',
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.node_repl_history',
  '.local/share/fish/fish_history',
];

type XdgEnv = Readonly<Record<string, string | undefined>>;

const XDG: readonly [string, string][] = [
  ['.cache', 'XDG_CACHE_HOME'],
  ['.config', 'XDG_CONFIG_HOME'],
  ['.local/share', 'XDG_DATA_HOME'],
  ['.local/state', 'XDG_STATE_HOME'],
];

/** Where `rel` (a table path, relative to the home) is on this machine: under an XDG folder when set. */
export function homePath(rel: string, env: XdgEnv): string {
  const home = env.HOME ?? '/';
  for (const [prefix, name] of XDG) {
    const dir = env[name];
    if (dir && path.isAbsolute(dir) && (rel === prefix || rel.startsWith(`${prefix}/`)))
      return path.join(dir, rel.slice(prefix.length));
  }
  return path.join(home, rel);
}

/**
 * The denied regions of the person's files: the home, Claude Code's config dir (its login and every
 * session's transcript) and the XDG folders wherever they are. Absolute, not yet filtered.
 */
export function homeRegions(env: XdgEnv): string[] {
  const out = [env.HOME, env.CLAUDE_CONFIG_DIR, ...XDG.map(([, name]) => env[name])];
  // NOTE: a home of `/` (some containers) is no region: denying it would hide the whole system.
  const region = (p: string | undefined): p is string =>
    Boolean(p && path.isAbsolute(p) && path.resolve(p) !== '/');
  return [...new Set(out.filter(region))];
}

/** Whether `child` is `parent` or inside it. */
function inside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The read rules of one run, as the sandbox gets them: denied paths, and paths opened inside them. */
export interface ReadFence {
  readonly denyRead: readonly string[];
  readonly allowRead: readonly string[];
}

/**
 * Whether the sandbox lets `p` (absolute, symlinks resolved) be read, by the sandbox runtime's rule:
 * the most specific entry around it decides, and at equal depth `allowRead` wins. Pure.
 */
export function readable(fence: ReadFence, p: string): boolean {
  const depth = (list: readonly string[]) =>
    Math.max(-1, ...list.filter((e) => inside(p, e)).map((e) => e.length));
  const denied = depth(fence.denyRead);
  return denied < 0 || depth(fence.allowRead) >= denied;
}

/**
 * Whether a search from `dir` (Grep, Glob) would reach into a denied place that Claude Code's Read
 * deny rules do not take out of its results: one below `dir` that lies inside no opened path (the
 * home below `/`, every run's work below `/tmp`), or that has an opening inside it (the worktrees'
 * folder in the repository around the run's own worktree: no deny rule can name it, see
 * readFenceRules). Other denials inside an opened path (the ledger, a credential) have their own
 * `Read(…)` rule. Pure.
 */
export function searchReachesDenied(fence: ReadFence, dir: string): boolean {
  const opened = (d: string) => fence.allowRead.some((a) => inside(d, a));
  const holed = (d: string) => fence.allowRead.some((a) => a !== d && inside(a, d));
  return fence.denyRead.some((d) => d !== dir && inside(d, dir) && (!opened(d) || holed(d)));
}
