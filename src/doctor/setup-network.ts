import path from 'node:path';
import type { Config } from '../config/schema.js';
import { runGit } from '../git/exec.js';
import {
  allowedBy,
  hostOf,
  type Installer,
  installerOf,
  lockfileHosts,
  manifestHosts,
  npmRegistry,
  setupDomainsLine,
} from './installs.js';

/** What one install in runs.setup downloads, as read from the files at HEAD. */
export interface InstallNeed {
  /** The simple command, as written. */
  readonly command: string;
  /** Where its hosts come from: `package-lock.json`, `package.json, no lockfile committed`, … */
  readonly source: string;
  readonly hosts: readonly string[];
}

/** The files of HEAD (a fix run's worktree is a checkout of it): a file's text, or null. */
export type HeadReader = (file: string) => Promise<string | null>;

export function headReader(root: string): HeadReader {
  return async (file) => {
    const run = await runGit(['cat-file', 'blob', `HEAD:${file}`], { cwd: root, stripFinalNewline: false });
    return run.exitCode === 0 ? run.stdout : null;
  };
}

const JS = new Set(['npm', 'pnpm', 'yarn', 'bun']);

/**
 * The installs of a command line, each with the hosts it downloads from; `cd <dir>` moves where
 * the next ones look for their files. An install agentbox does not recognise is not listed.
 */
export async function installNeeds(commands: readonly string[], read: HeadReader): Promise<InstallNeed[]> {
  const needs: InstallNeed[] = [];
  let dir = '';
  for (const raw of commands) {
    const command = raw.replace(/\s+/g, ' ').trim();
    const cd = /^cd (\S+)$/.exec(command);
    if (cd) {
      dir = path.posix.normalize(path.posix.join(dir, cd[1]!.replace(/^['"]|['"]$/g, '')));
      continue;
    }
    const installer = installerOf(command);
    if (installer) needs.push(await needOf(command, installer, dir === '.' ? '' : dir, read));
  }
  return needs;
}

async function needOf(command: string, installer: Installer, dir: string, read: HeadReader) {
  const at = (file: string) => (dir ? `${dir}/${file}` : file);
  const registry = JS.has(installer.name)
    ? npmRegistry(await read(at('.npmrc')), installer.registry)
    : commandRegistry(command, installer.registry);
  for (const lockfile of installer.lockfiles) {
    const text = await read(at(lockfile));
    if (text !== null)
      return { command, source: at(lockfile), hosts: lockfileHosts(lockfile, text, registry) };
  }
  if (installer.manifests.length === 0) return { command, source: 'its command line', hosts: registry };
  for (const manifest of installer.manifests) {
    const text = await read(at(manifest));
    if (text === null) continue;
    const hosts =
      manifest === 'package.json'
        ? manifestHosts(text, registry)
        : /^\[(.*\.)?(dependencies|dev-dependencies|build-dependencies)\]\s*\n\s*[\w"-]/m.test(text) ||
            /^dependencies\s*=\s*\[\s*"/m.test(text)
          ? registry
          : [];
    return { command, source: `${at(manifest)}, no lockfile committed`, hosts };
  }
  return { command, source: `no ${installer.manifests.join(' or ')} committed`, hosts: [] };
}

/** pip's and uv's `--index-url`/`-i` replaces PyPI; `--extra-index-url` adds to it. Pure. */
export function commandRegistry(command: string, fallback: readonly string[]): string[] {
  const index = /(?:--index-url|-i)[= ](\S+)/.exec(command);
  const extra = [...command.matchAll(/--extra-index-url[= ](\S+)/g)].map((m) => hostOf(m[1]!));
  const main = index ? [hostOf(index[1]!)] : fallback;
  return [...new Set([...main, ...extra].filter((h): h is string => Boolean(h)))];
}

/** What the setup's sandbox lets through: the run's domains plus `runs.setup_domains`. Pure. */
export function setupAllowed(config: Config): string[] {
  return [...config.sandbox.allowed_domains, ...config.runs.setup_domains];
}

export interface NetworkVerdict {
  readonly ok: boolean;
  /** For the check's line: what the installs reach, or what they cannot. */
  readonly detail: string;
  readonly fix?: string;
}

/** The installs' hosts against the setup's allowlist: one line either way. Pure. */
export function networkVerdict(needs: readonly InstallNeed[], config: Config): NetworkVerdict {
  const allowed = setupAllowed(config);
  const missing = [...new Set(needs.flatMap((n) => n.hosts.filter((h) => !allowedBy(h, allowed))))];
  if (missing.length === 0) {
    const reached = needs
      .map((n) =>
        n.hosts.length === 0
          ? `${n.command}: nothing to download (${n.source})`
          : `${n.command} reaches ${n.hosts.join(', ')} (${n.source}), allowed`,
      )
      .join('; ');
    return { ok: true, detail: reached };
  }
  const blocked = needs.filter((n) => n.hosts.some((h) => missing.includes(h)));
  const why = blocked
    .map((n) => `${n.command} downloads from ${n.hosts.join(', ')} (${n.source})`)
    .join('; ');
  return {
    ok: false,
    detail: `runs.setup: ${why}, and the sandbox's network allowlist lets the setup reach ${
      allowed.length > 0 ? `only ${allowed.join(', ')}` : 'no host'
    }: the sandbox's proxy would refuse ${missing.join(', ')} (E403)`,
    fix: `in agentbox.yaml, under runs:, write  ${setupDomainsLine(config.runs.setup_domains, missing)}  (only the setup reaches them, not the agent), then agentbox trust (a repository's setup_domains needs it); or prepare the worktree with no network (docs/runs.md, Preparing a worktree)`,
  };
}
