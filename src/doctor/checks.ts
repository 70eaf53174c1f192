import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claudeVersion, findClaudeBin } from '../claude/bin.js';
import { probeSettings } from '../claude/probe.js';
import type { Config } from '../config/schema.js';
import { isAgentboxError } from '../errors.js';
import { runGit } from '../git/exec.js';
import { LEDGER_IGNORES, unignored } from '../git/ignore.js';
import { findRepo, type Repo } from '../git/repo.js';
import { ledgerPaths, openLedger } from '../ledger/index.js';
import { probeSandbox } from '../sandbox/available.js';
import { isObject, readSettings, SETTINGS_FILES, settingsPath } from '../settings/file.js';
import { DENY_RULES, GUARD_EVENT, GUARD_MARK } from '../settings/managed.js';
import { validateSettings } from '../settings/validate.js';
import { entryLine, loadTrustedConfig, type TrustStatus } from '../trust/index.js';
import type { Env } from '../util/env.js';
import { probeCopy } from './probe-copy.js';

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** A check that could not run because an earlier one failed. */
  readonly skipped?: boolean;
  /** Passed, with something to act on before it becomes a failure (its fix says what). */
  readonly warn?: boolean;
  readonly detail: string;
  /** What the detail lists (a repository's entries), each on a line of its own under it. */
  readonly lines?: readonly string[];
  readonly fix?: string;
}

const pass = (name: string, detail: string): CheckResult => ({ name, ok: true, detail });
const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, ok: false, detail, fix });
const skip = (name: string, detail: string): CheckResult => ({ name, ok: false, skipped: true, detail });
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const hintOf = (error: unknown, fallback: string) =>
  isAgentboxError(error) && error.hint ? error.hint : fallback;

/** `git version 2.39.5` (and vendor suffixes such as ` (Apple Git-146)`) → its numbers. Pure. */
export function parseGitVersion(text: string): { major: number; minor: number; patch: number } | null {
  const m = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) } : null;
}

export async function checkGit(cwd: string, env: Env): Promise<CheckResult> {
  try {
    const run = await runGit(['--version'], { cwd, env });
    const v = run.exitCode === 0 ? parseGitVersion(run.stdout) : null;
    if (!v) return fail('git', 'git is not installed', 'install git 2.17 or newer');
    const supported = v.major > 2 || (v.major === 2 && v.minor >= 17);
    return supported
      ? pass('git', `git ${v.major}.${v.minor}.${v.patch} (worktrees supported)`)
      : fail(
          'git',
          `git ${v.major}.${v.minor} is too old for "git worktree remove"`,
          'install git 2.17 or newer',
        );
  } catch (error) {
    return fail('git', message(error), 'install git 2.17 or newer');
  }
}

export async function checkRepo(cwd: string, env?: Env): Promise<{ result: CheckResult; repo?: Repo }> {
  try {
    const repo = await findRepo(cwd, env);
    return { result: pass('repository', repo.root), repo };
  } catch (error) {
    return { result: fail('repository', message(error), hintOf(error, 'cd into your repository')) };
  }
}

export async function checkLedger(repo: Repo): Promise<CheckResult[]> {
  const ledger = ledgerPaths(repo.root);
  if (!fs.existsSync(ledger.runsDir)) {
    return [
      fail('ledger', `${ledger.dir}/runs is missing`, 'agentbox init'),
      skip('ledger ignored', 'no ledger yet'),
    ];
  }
  try {
    openLedger(repo.root);
  } catch (error) {
    return [
      fail('ledger', message(error), hintOf(error, 'agentbox init')),
      skip('ledger ignored', 'no ledger'),
    ];
  }
  const missing = await unignored(repo.root, LEDGER_IGNORES.slice(0, 1));
  const ignored =
    missing.length === 0
      ? pass('ledger ignored', '.agents/ is ignored by git')
      : fail(
          'ledger ignored',
          '.agents/ is NOT ignored by git: runs could be committed',
          'agentbox init (or add ".agents/" to .gitignore)',
        );
  return [pass('ledger', ledger.dir), ignored];
}

export function checkConfig(
  repo: Repo | undefined,
  env: Env,
): { result: CheckResult; config?: Config; trust?: TrustStatus } {
  try {
    const { config, sources, trust } = loadTrustedConfig({ repoRoot: repo?.root, env });
    const found = sources.filter((s) => s.exists).map((s) => `${s.kind} ${s.path}`);
    return {
      result: pass('config', found.length > 0 ? found.join('; ') : 'defaults (no config file)'),
      config,
      ...(trust ? { trust } : {}),
    };
  } catch (error) {
    return { result: fail('config', message(error), hintOf(error, 'fix the config file')) };
  }
}

/** What the repository carries that awaits the person's trust: listed, each entry, until trusted. */
export function checkTrust(trust: TrustStatus): CheckResult {
  if (trust.trusted)
    return pass(
      'workspace trust',
      trust.state === 'nothing' ? 'nothing here needs trust' : `trusted (${trust.entries.length} entries)`,
    );
  const why = trust.state === 'changed' ? 'changed since you trusted them' : 'not trusted';
  return {
    ...fail(
      'workspace trust',
      `${trust.entries.length} entries ${why}, not used:`,
      'review them, then run "agentbox trust"',
    ),
    lines: trust.entries.map((e) => entryLine(e)),
  };
}

export async function checkClaude(
  env: Env,
  config: Config | undefined,
  repo: Repo | undefined,
  cwd: string,
): Promise<{ result: CheckResult; bin?: string }> {
  if (!config) return { result: skip('claude', 'config is invalid') };
  try {
    const bin = findClaudeBin({ env, config, repoRoot: repo?.root, cwd });
    const version = await claudeVersion(bin.path, env);
    return {
      result: pass('claude', `Claude Code ${version} at ${bin.path} (from ${bin.source})`),
      bin: bin.path,
    };
  } catch (error) {
    return { result: fail('claude', message(error), hintOf(error, 'install Claude Code')) };
  }
}

/**
 * Interactive sessions (`agentbox start`) need node-pty's native module: loads it and runs a
 * process behind a pseudo-terminal to its exit.
 */
export async function checkPty(): Promise<CheckResult> {
  const { loadPty, PTY_FIX } = await import('../claude/pty.js');
  try {
    const spawn = await loadPty();
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', 'process.exit(7)'], { cols: 80, rows: 24 });
      const timer = setTimeout(
        () => reject(new Error('a process behind a pty did not exit within 10 s')),
        10_000,
      );
      child.onExit(({ exitCode }) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    if (code !== 7) return fail('pty', `a process behind a pty exited ${code}, not 7`, PTY_FIX);
    return pass('pty', 'node-pty works (agentbox start can run claude behind a terminal)');
  } catch (error) {
    return fail('pty', message(error), hintOf(error, PTY_FIX));
  }
}

/** Static check of the settings files: agentbox's entries present, and nothing Claude Code would reject. */
export function checkHooksInstalled(repo: Repo): { result: CheckResult; files: string[] } {
  const installedIn: string[] = [];
  for (const scope of ['shared', 'local'] as const) {
    const file = settingsPath(repo.root, scope);
    let value: Record<string, unknown>;
    try {
      value = readSettings(file).value;
    } catch (error) {
      return {
        result: fail('hooks installed', message(error), hintOf(error, 'fix the settings file')),
        files: [],
      };
    }
    const issues = validateSettings(value as never);
    if (issues.length > 0) {
      const i = issues[0]!;
      return {
        result: fail(
          'hooks installed',
          `${file}: ${i.path} ${i.message} — Claude Code ignores this whole file`,
          'fix that entry by hand',
        ),
        files: [],
      };
    }
    const hooks = isObject(value.hooks as never) ? (value.hooks as Record<string, unknown>) : {};
    const groups = Array.isArray(hooks[GUARD_EVENT]) ? (hooks[GUARD_EVENT] as unknown[]) : [];
    const hasGuard = JSON.stringify(groups).includes(GUARD_MARK);
    const deny = (value.permissions as { deny?: unknown } | undefined)?.deny;
    const hasRules = Array.isArray(deny) && DENY_RULES.every((r) => deny.includes(r));
    if (hasGuard && hasRules) installedIn.push(SETTINGS_FILES[scope]);
  }
  return installedIn.length > 0
    ? { result: pass('hooks installed', installedIn.join(', ')), files: installedIn }
    : {
        result: fail(
          'hooks installed',
          'agentbox hooks and deny rules are not in .claude/settings.json or settings.local.json',
          'agentbox init',
        ),
        files: [],
      };
}

/**
 * Asks Claude Code itself. `claude -p /cost` loads the project settings and exits without calling
 * a model; its debug log says "Invalid setting skipped" for a file it drops (which it otherwise
 * does silently) and lists the deny rules it applied.
 */
export async function checkHooksAccepted(repo: Repo, bin: string, env: Env): Promise<CheckResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-doctor-'));
  const debugFile = path.join(dir, 'debug.log');
  try {
    // NOTE: never in the repository itself: its hooks, helpers and MCP servers would run (even
    // trusted ones: a check runs nothing of the project's). An inert copy fails the same way.
    const copy = probeCopy(repo.root, dir);
    const run = await probeSettings(bin, copy, env, debugFile);
    const log = fs.existsSync(debugFile) ? fs.readFileSync(debugFile, 'utf8') : '';
    const skipped = log
      .split('\n')
      .find((line) => line.includes('Invalid setting skipped') && line.includes(copy));
    if (skipped) {
      return fail(
        'hooks accepted',
        `Claude Code dropped a settings file: ${skipped.replace(/^.*Invalid setting skipped[^:]*: /, '').replaceAll(copy, repo.root)}`,
        'fix that entry by hand; Claude Code ignores the whole file meanwhile',
      );
    }
    if (!log.includes(DENY_RULES[0])) {
      const why =
        run.exitCode === 0
          ? "its debug log does not show agentbox's deny rules"
          : `claude exited ${run.exitCode ?? run.signal}: ${`${run.stderr}${run.stdout}`.trim().slice(0, 200)}`;
      return fail(
        'hooks accepted',
        `could not confirm that Claude Code loaded the settings: ${why}`,
        'run "agentbox init", then "agentbox doctor" again',
      );
    }
    return pass('hooks accepted', 'Claude Code loaded the settings with no entry skipped');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Fix runs need Claude Code's sandbox (unless agentbox.yaml opts out): can it work here? */
export function checkSandbox(env: Env, config: Config | undefined): CheckResult {
  const mode = config?.sandbox.mode ?? 'required';
  if (mode === 'off') {
    const why =
      env.AGENTBOX_SANDBOX === 'container'
        ? 'AGENTBOX_SANDBOX=container: the container is the sandbox'
        : 'sandbox.mode: off in agentbox.yaml';
    return pass('sandbox', `off (${why}): scout, plan, review and fix runs run shell commands unsandboxed`);
  }
  const probe = probeSandbox(env);
  return probe.ok
    ? pass('sandbox', `${probe.detail}: every run's shell commands are fenced by the kernel`)
    : fail('sandbox', `scout, plan, review and fix runs cannot start: ${probe.problem}`, probe.fix);
}
