import fs from 'node:fs';
import path from 'node:path';
import { buildAgentEnv } from '../claude/env.js';
import type { Config } from '../config/schema.js';
import { runGit } from '../git/exec.js';
import type { Repo } from '../git/repo.js';
import { probeVerifySandbox } from '../sandbox/available.js';
import type { TrustEntry } from '../trust/index.js';
import type { Env } from '../util/env.js';
import type { CheckResult } from './checks.js';
import {
  headReader,
  installNeeds,
  type NetworkVerdict,
  networkVerdict,
  setupAllowed,
} from './setup-network.js';
import { untrustedRunsDetail } from './untrusted.js';

/**
 * `runs.setup` and `runs.verify`, checked without running them (issue 29: `npm ci` in a project
 * without a lockfile passed doctor and failed at the first fix). What can be known beforehand: the
 * program each command starts is on the run's PATH, and an install that insists on a lockfile
 * finds one committed (a fix run's worktree is a checkout of HEAD: an uncommitted lockfile is not
 * in it). Advice only: the run itself is what tells.
 */

/** Installs that refuse to run without their lockfile, and the files that satisfy them. */
export const LOCKFILE_RULES: readonly {
  readonly install: RegExp;
  readonly label: string;
  readonly lockfiles: readonly string[];
}[] = [
  {
    install: /^npm (ci|clean-install|install-clean|ic)\b/,
    label: 'npm ci',
    lockfiles: ['package-lock.json', 'npm-shrinkwrap.json'],
  },
  {
    install: /^pnpm (install|i)\b.*--frozen-lockfile/,
    label: 'pnpm install --frozen-lockfile',
    lockfiles: ['pnpm-lock.yaml'],
  },
  {
    install: /^yarn( install)?\b.*--(immutable|frozen-lockfile)/,
    label: 'yarn install --immutable',
    lockfiles: ['yarn.lock'],
  },
  {
    install: /^bun (install|i)\b.*--frozen-lockfile/,
    label: 'bun install --frozen-lockfile',
    lockfiles: ['bun.lock', 'bun.lockb'],
  },
];

/** Words a shell answers itself: nothing to find on PATH. */
const BUILTINS = new Set([
  'cd',
  'export',
  'set',
  'unset',
  'test',
  '[',
  'true',
  'false',
  ':',
  '.',
  'source',
  'echo',
  'exec',
  'command',
  'eval',
  'exit',
  'if',
  'then',
  'fi',
  'for',
  'do',
  'done',
  'while',
]);

/**
 * The simple commands of a command line, split at `&&`, `||`, `;`, `|` and newlines, each with
 * its leading `NAME=value` assignments dropped; quotes are not parsed (a program name is rarely
 * quoted). Pure.
 */
export function simpleCommands(line: string): string[] {
  return line
    .split(/&&|\|\||[;|\n]/)
    .map((part) =>
      part
        .trim()
        .replace(/^\(+\s*/, '')
        .replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, ''),
    )
    .filter((part) => part.length > 0);
}

/** The programs a command line starts (first word of each simple command), builtins left out. Pure. */
export function programsOf(line: string): string[] {
  const words = simpleCommands(line).map((c) => c.split(/\s+/)[0]!.replace(/^['"]|['"]$/g, ''));
  return [...new Set(words.filter((w) => w && !BUILTINS.has(w)))];
}

/** The lockfile rules a command line's installs are under. Pure. */
export function lockfileNeeds(line: string): (typeof LOCKFILE_RULES)[number][] {
  const commands = simpleCommands(line).map((c) => c.replace(/\s+/g, ' '));
  return LOCKFILE_RULES.filter((rule) => commands.some((c) => rule.install.test(c)));
}

/** `which`: the executable file `program` resolves to on `pathVar`, relative names from `cwd`. */
export function which(program: string, pathVar: string, cwd: string): string | null {
  const candidates = program.includes('/')
    ? [path.resolve(cwd, program)]
    : pathVar
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, program));
  for (const file of candidates) {
    try {
      if (!fs.statSync(file).isFile()) continue;
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not there, or not executable: the next one
    }
  }
  return null;
}

export const COPY_SETUP = 'setup: cp -a --reflink=auto "$AGENTBOX_REPO_ROOT/node_modules" .';

/** What a fix run's setup and verify would stumble on first; null when nothing. */
async function setupProblem(
  repo: Repo,
  key: 'setup' | 'verify',
  line: string,
  pathVar: string,
): Promise<{ detail: string; fix: string } | null> {
  const missing = programsOf(line).filter((p) => which(p, pathVar, repo.root) === null);
  if (missing.length > 0)
    return {
      detail: `runs.${key} "${line}": ${missing.map((m) => `"${m}"`).join(', ')} not found on the run's PATH`,
      fix: `install ${missing.join(', ')}, or name it by its full path in agentbox.yaml (runs.${key})`,
    };
  for (const rule of lockfileNeeds(line)) {
    const committed = await committedFiles(repo.root, rule.lockfiles);
    if (committed.length > 0) continue;
    return {
      detail: `runs.${key} "${line}": ${rule.label} needs ${rule.lockfiles.join(' or ')} committed, and HEAD has none (a fix run's worktree is a checkout of HEAD)`,
      fix: `commit the lockfile, or install without one (e.g. npm install), or copy what you installed — ${COPY_SETUP} (docs/runs.md)`,
    };
  }
  return null;
}

async function committedFiles(root: string, files: readonly string[]): Promise<string[]> {
  const run = await runGit(['ls-tree', '--name-only', 'HEAD', '--', ...files], { cwd: root });
  return run.exitCode === 0 ? run.stdout.split('\n').filter(Boolean) : [];
}

/**
 * runs.setup and runs.verify: their programs on the run's PATH, their installs' lockfiles
 * committed, and the hosts runs.setup's installs download from within the setup's network
 * allowlist. The line says what was checked, and only that (issue 38: "lockfiles committed" was
 * printed for an `npm install` in a repository that had none). `untrusted`: the repository's
 * entries awaiting trust (untrustedRuns): said to be set but not run, not "not set".
 */
export async function checkSetup(
  repo: Repo,
  env: Env,
  config: Config,
  untrusted: readonly TrustEntry[] = [],
): Promise<CheckResult> {
  const lines = (['setup', 'verify'] as const).flatMap((key) => {
    const line = config.runs[key];
    return line ? [{ key, line }] : [];
  });
  const pending = untrusted.filter((e) => !lines.some((l) => e.key === `runs.${l.key}`));
  const notRun = pending.length > 0 ? `; ${untrustedRunsDetail(pending)}` : '';
  if (lines.length === 0 && pending.length > 0)
    return { name: 'setup', ok: false, skipped: true, detail: untrustedRunsDetail(pending) };
  if (lines.length === 0)
    return { name: 'setup', ok: true, detail: 'runs.setup and runs.verify are not set' };
  const pathVar = buildAgentEnv(env, { cwd: repo.root, pass: [...config.runs.env_pass] }).PATH ?? '';
  for (const { key, line } of lines) {
    const problem = await setupProblem(repo, key, line, pathVar);
    if (problem) return { name: 'setup', ok: false, ...problem };
  }
  const runtime = config.runs.setup && config.sandbox.mode !== 'off' ? probeVerifySandbox(env) : null;
  if (runtime && !runtime.ok)
    return {
      name: 'setup',
      ok: false,
      detail: runtime.problem.replace('runs.verify', 'runs.setup (and runs.verify)'),
      fix: runtime.fix,
    };
  const network = await setupNetwork(repo, config);
  if (!network.ok) return { name: 'setup', ok: false, detail: network.detail, fix: network.fix! };
  const locked = lines.some((l) => lockfileNeeds(l.line).length > 0);
  const installs = /^(npm|pnpm|yarn|bun)( (ci|install|i)\b|$)/.test(config.runs.setup ?? '');
  const tip =
    installs && fs.existsSync(path.join(repo.root, 'node_modules'))
      ? `; to reuse what you installed, with no network: ${COPY_SETUP}`
      : '';
  const what = `programs found on the run's PATH${locked ? ', lockfiles committed' : ''}`;
  return {
    name: 'setup',
    ok: true,
    detail: `${lines.map((l) => `runs.${l.key}`).join(' and ')}: ${what}${network.detail ? `; ${network.detail}` : ''} (not run)${tip}${notRun}`,
  };
}

/** runs.setup's installs against the network its sandbox allows (nothing to say without a setup). */
async function setupNetwork(repo: Repo, config: Config): Promise<NetworkVerdict> {
  const setup = config.runs.setup;
  if (!setup) return { ok: true, detail: '' };
  if (config.sandbox.mode === 'off')
    return { ok: true, detail: 'its network is not fenced (sandbox.mode: off)' };
  const needs = await installNeeds(simpleCommands(setup), headReader(repo.root));
  if (needs.length === 0)
    return {
      ok: true,
      detail: `no install agentbox recognises in runs.setup: what it downloads is not checked (it reaches ${
        setupAllowed(config).join(', ') || 'no host'
      })`,
    };
  return networkVerdict(needs, config);
}
