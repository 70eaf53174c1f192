/**
 * What a `runs.setup` install downloads, and from which hosts, read from the files a fix run's
 * worktree holds (issue 38: `npm install` with no lockfile and no `runs.setup_domains` passed
 * doctor, then the sandbox's proxy refused registry.npmjs.org). Pure: the caller reads the files.
 */

/** A package manager's install command agentbox recognises, and where it downloads from by default. */
export interface Installer {
  readonly name: string;
  readonly install: RegExp;
  /** The file that says what to install; without it the install downloads nothing. */
  readonly manifests: readonly string[];
  /** Lockfiles, first found wins: the hosts they name are the ones the install reaches. */
  readonly lockfiles: readonly string[];
  /** Where it downloads what a lockfile names without a URL, and everything without a lockfile. */
  readonly registry: readonly string[];
}

const NPM = ['registry.npmjs.org'];
const PYPI = ['pypi.org', 'files.pythonhosted.org'];
/** crates.io's sparse index (cargo's default since 1.70) and its downloads. */
const CRATES = ['index.crates.io', 'static.crates.io'];

export const INSTALLERS: readonly Installer[] = [
  {
    name: 'npm',
    install: /^npm( (ci|clean-install|install-clean|ic|install|i|add|isntall)\b|$)/,
    manifests: ['package.json'],
    lockfiles: ['npm-shrinkwrap.json', 'package-lock.json'],
    registry: NPM,
  },
  {
    name: 'pnpm',
    install: /^pnpm( (install|i|add)\b|$)/,
    manifests: ['package.json'],
    lockfiles: ['pnpm-lock.yaml'],
    registry: NPM,
  },
  {
    name: 'yarn',
    install: /^yarn( (install|add)\b|$| --)/,
    manifests: ['package.json'],
    lockfiles: ['yarn.lock'],
    registry: ['registry.yarnpkg.com'],
  },
  {
    name: 'bun',
    install: /^bun (install|i|add)\b/,
    manifests: ['package.json'],
    lockfiles: ['bun.lock', 'bun.lockb'],
    registry: NPM,
  },
  {
    name: 'pip',
    install: /^(python3? -m )?pip3? install\b/,
    manifests: [],
    lockfiles: [],
    registry: PYPI,
  },
  {
    name: 'uv',
    install: /^uv (sync|pip install|add)\b/,
    manifests: ['pyproject.toml'],
    lockfiles: ['uv.lock'],
    registry: PYPI,
  },
  {
    name: 'poetry',
    install: /^poetry (install|add)\b/,
    manifests: ['pyproject.toml'],
    lockfiles: ['poetry.lock'],
    registry: PYPI,
  },
  {
    name: 'cargo',
    install: /^cargo (fetch|build|test|check|run|install|clippy|doc)\b/,
    manifests: ['Cargo.toml'],
    lockfiles: ['Cargo.lock'],
    registry: CRATES,
  },
];

/** The installer a simple command (whitespace collapsed) is, or null. Pure. */
export function installerOf(command: string): Installer | null {
  if (/\s--(offline|frozen|no-index)(?=\s|$)/.test(command)) return null;
  return INSTALLERS.find((i) => i.install.test(command)) ?? null;
}

/** A DNS name or an IPv4 address: what a person can allow, and all that a download can reach. */
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?$/;

/**
 * The host of a URL (`git+https://`, `registry+https://`, `sparse+https://` too), or null — null
 * too when what stands there is no host name: a repository's lockfile or `.npmrc` is a stranger's
 * text, and a "host" holding an escape sequence would reach the terminal and the setup_domains
 * line doctor suggests (a host no resolver answers for cannot download anything either). Pure.
 */
export function hostOf(url: string): string | null {
  const m = /^(?:[a-z]+\+)?(?:https?|ssh|git):\/\/(?:[^@/]+@)?([^/:?#]+)/i.exec(url.trim());
  const host = m ? m[1]!.toLowerCase() : null;
  return host !== null && HOST_NAME.test(host) ? host : null;
}

/** npm's default registry, or the project's `.npmrc` `registry=` (the worktree's; the person's is not read in the sandbox). Pure. */
export function npmRegistry(npmrc: string | null, fallback: readonly string[]): string[] {
  const m = npmrc ? /^\s*registry\s*=\s*(\S+)/m.exec(npmrc) : null;
  const host = m ? hostOf(m[1]!) : null;
  return host ? [host] : [...fallback];
}

const DEP_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'];

/** The hosts a package.json's dependencies come from when no lockfile pins them. Pure. */
export function manifestHosts(packageJson: string, registry: readonly string[]): string[] {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(packageJson) as Record<string, unknown>;
  } catch {
    return [...registry]; // npm fails on it anyway; the registry is what it would have asked
  }
  const specs = DEP_FIELDS.flatMap((field) => {
    const deps = value[field];
    return deps && typeof deps === 'object' ? Object.values(deps as Record<string, unknown>) : [];
  }).map(String);
  const hosts = new Set<string>();
  // Workspaces' own dependencies live in their package.json files: the registry, to be safe.
  if (value.workspaces) for (const h of registry) hosts.add(h);
  for (const spec of specs) {
    if (/^(file:|link:|workspace:|\.{0,2}\/)/.test(spec)) continue;
    if (/^(github:|[\w.-]+\/[\w.-]+(#.*)?$)/.test(spec)) {
      hosts.add('github.com');
      hosts.add('codeload.github.com');
      continue;
    }
    const host = hostOf(spec);
    for (const h of host ? [host] : registry) hosts.add(h);
  }
  return [...hosts];
}

/** The hosts a lockfile's packages are fetched from (named URLs; the registry for those without one). Pure. */
export function lockfileHosts(file: string, text: string, registry: readonly string[]): string[] {
  const hosts = new Set<string>();
  const add = (url: string) => {
    const host = hostOf(url);
    if (host) hosts.add(host);
  };
  const addRegistry = () => {
    for (const h of registry) hosts.add(h);
  };
  if (file === 'package-lock.json' || file === 'npm-shrinkwrap.json') {
    packageLockHosts(text, add, addRegistry);
  } else if (file === 'yarn.lock') {
    for (const m of text.matchAll(/^\s+resolved:? "?([^"\s#]+)/gm)) add(m[1]!);
    if (/^\s+resolution: "[^"]*@npm:/m.test(text)) addRegistry();
  } else if (file === 'pnpm-lock.yaml') {
    for (const m of text.matchAll(/tarball: '?"?(https?:\/\/[^'"\s,}]+)/g)) add(m[1]!);
    if (/resolution: \{integrity:/.test(text)) addRegistry();
  } else if (file === 'bun.lock') {
    for (const m of text.matchAll(/\[\s*"[^"]+@[^"]+",\s*"([^"]*)"/g))
      if (m[1] === '') addRegistry();
      else add(m[1]!);
  } else if (file === 'bun.lockb') {
    addRegistry(); // binary: its packages cannot be read here
  } else if (file === 'Cargo.lock') {
    for (const m of text.matchAll(/^source = "([^"]+)"/gm)) {
      if (m[1]!.includes('github.com/rust-lang/crates.io-index')) addRegistry();
      else add(m[1]!);
    }
  } else {
    // uv.lock, poetry.lock: every URL is a source or a download; PyPI's files have none in poetry.lock.
    for (const m of text.matchAll(/"(https?:\/\/[^"]+)"/g)) add(m[1]!);
    if (file === 'poetry.lock' && /^\[\[package\]\]/m.test(text)) addRegistry();
  }
  return [...hosts];
}

function packageLockHosts(text: string, add: (url: string) => void, addRegistry: () => void): void {
  let lock: { packages?: Record<string, Record<string, unknown>>; dependencies?: Record<string, unknown> };
  try {
    lock = JSON.parse(text);
  } catch {
    addRegistry();
    return;
  }
  const entries = Object.entries(lock.packages ?? {}).filter(([key]) => key !== '');
  for (const [, entry] of entries) {
    if (entry.link || entry.inBundle) continue;
    if (typeof entry.resolved === 'string') {
      if (!entry.resolved.startsWith('file:')) add(entry.resolved);
    } else addRegistry();
  }
  // lockfileVersion 1 names its packages under `dependencies` only.
  if (!lock.packages && lock.dependencies && Object.keys(lock.dependencies).length > 0) {
    for (const m of text.matchAll(/"resolved": "([^"]+)"/g)) add(m[1]!);
    addRegistry();
  }
}

/** Whether the sandbox's proxy lets `host` through `domains` (an entry `*.example.com` covers its subdomains). Pure. */
export function allowedBy(host: string, domains: readonly string[]): boolean {
  return domains.some((d) => {
    const domain = d.toLowerCase();
    return domain.startsWith('*.') ? host.endsWith(domain.slice(1)) : host === domain;
  });
}

/** The line to write under `runs:` in agentbox.yaml: what is there, plus what is missing. Pure. */
export function setupDomainsLine(current: readonly string[], missing: readonly string[]): string {
  return `setup_domains: [${[...new Set([...current, ...missing])].join(', ')}]`;
}
