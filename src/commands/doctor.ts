import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { checkAuth, checkModel, withVisibleCredentials } from '../doctor/auth.js';
import {
  type CheckResult,
  checkClaude,
  checkConfig,
  checkGit,
  checkHooksAccepted,
  checkHooksInstalled,
  checkLedger,
  checkPty,
  checkRepo,
  checkSandbox,
  checkTrust,
} from '../doctor/checks.js';
import { nodeLineResult } from '../doctor/node-line.js';
import { checkReadOnlyFence } from '../doctor/read-fence.js';
import { checkSetup } from '../doctor/setup.js';
import { checkTemplates, checkVerify } from '../doctor/templates.js';
import { untrustedRuns } from '../doctor/untrusted.js';
import { terminalJson } from '../util/json-out.js';
import { type Styler, styler } from '../util/style.js';
import { terminalLine } from '../util/terminal-text.js';

export interface DoctorOptions {
  readonly json?: boolean;
}

/**
 * checkAuth in `cwd`, or (undefined: an untrusted repository, whose apiKeyHelper and the like must
 * not run) in a new empty folder of our own.
 */
async function authCheck(bin: string, cwd: string | undefined, env: CommandContext['env']) {
  if (cwd) return withVisibleCredentials(await checkAuth(bin, cwd, env), env);
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-auth-'));
  try {
    return withVisibleCredentials(await checkAuth(bin, empty, env), env);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
}

/** The login, then one request to where Claude Code sends its model calls (only with a login). */
async function modelChecks(
  env: CommandContext['env'],
  bin: string | undefined,
  cwd: string | undefined,
  model: string | null,
): Promise<CheckResult[]> {
  const login = bin
    ? await authCheck(bin, cwd, env)
    : { name: 'claude login', ok: false, skipped: true, detail: 'needs the Claude Code binary' };
  return [
    login,
    login.ok
      ? await checkModel(env, model)
      : { name: 'model reachable', ok: false, skipped: true, detail: 'needs a login or an API key' },
  ];
}

/** Runs every check it can, prints each with its fix, and fails (exit 1) if any failed. */
export async function doctor(ctx: CommandContext, options: DoctorOptions = {}): Promise<number> {
  const results: CheckResult[] = [
    nodeLineResult(process.versions.node, new Date()),
    await checkGit(ctx.cwd, ctx.env),
  ];
  const { result: repoResult, repo } = await checkRepo(ctx.cwd, ctx.env);
  results.push(repoResult);
  const { result: configResult, config, trust } = checkConfig(repo, ctx.env);
  if (repo) results.push(...(await checkLedger(repo)));
  results.push(configResult);
  if (trust) results.push(checkTrust(trust));
  const { result: claudeResult, bin } = await checkClaude(ctx.env, config, repo, ctx.cwd);
  results.push(claudeResult);
  // An untrusted repository's apiKeyHelper and the like must not run: asked outside it then.
  const authCwd = trust?.trusted === false ? undefined : (repo?.root ?? ctx.cwd);
  results.push(...(await modelChecks(ctx.env, bin, authCwd, config?.claude.model ?? null)));
  results.push(await checkPty());
  const sandbox = checkSandbox(ctx.env, config);
  results.push(sandbox);
  // The repository's runs.setup and runs.verify awaiting trust are not in `config`: said so, not "not set".
  const untrusted = untrustedRuns(trust);
  if (repo && config)
    results.push(
      checkTemplates(repo, ctx.env, config),
      checkVerify(ctx.env, config, sandbox.ok, untrusted),
      await checkSetup(repo, ctx.env, config, untrusted),
      await checkReadOnlyFence(repo, ctx.env, config),
    );
  if (repo) {
    const installed = checkHooksInstalled(repo);
    results.push(installed.result);
    if (!bin)
      results.push({
        name: 'hooks accepted',
        ok: false,
        skipped: true,
        detail: 'needs the Claude Code binary',
      });
    else if (!installed.result.ok)
      results.push({ name: 'hooks accepted', ok: false, skipped: true, detail: 'no hooks installed' });
    else results.push(await checkHooksAccepted(repo, bin, ctx.env));
  }

  const failed = results.filter((r) => !r.ok && !r.skipped);
  if (options.json) {
    ctx.io.out(`${terminalJson({ ok: failed.length === 0, checks: results }, 2)}\n`);
    return failed.length === 0 ? 0 : 1;
  }
  ctx.io.out(resultsText(styler(ctx.io), results, failed.length));
  return failed.length === 0 ? 0 : 1;
}

/**
 * One line per check (✓ passed, ! a warning, ✗ failed, - skipped), what it lists and its fix
 * below, then the count. Pure.
 */
export function resultsText(s: Styler, results: readonly CheckResult[], failed: number): string {
  const width = Math.max(...results.map((r) => r.name.length));
  const under = `  ${' '.repeat(width)}  `;
  let out = '';
  for (const r of results) {
    const mark = r.warn ? s.warn('!') : r.ok ? s.ok('✓') : r.skipped ? s.dim('-') : s.bad('✗');
    // A check's words carry a repository's text (a lockfile's hosts, a config's values): each of
    // its lines stays one line.
    const detail = terminalLine(r.detail);
    out += `${mark} ${r.name.padEnd(width)}  ${r.skipped ? s.dim(`skipped: ${detail}`) : detail}\n`;
    for (const line of r.lines ?? []) out += `${under}${terminalLine(line)}\n`;
    if ((r.warn || (!r.ok && !r.skipped)) && r.fix)
      out += `${under}${s.warn('fix:')} ${terminalLine(r.fix)}\n`;
  }
  const warned = results.filter((r) => r.warn).length;
  const warnings = warned > 0 ? ` ${warned} warning(s) (!) above.` : '';
  return (
    out +
    (failed === 0
      ? `\n${s.ok('All checks passed.')}${warnings}\n`
      : `\n${s.bad(`${failed} check(s) failed.`)}${warnings}\n`)
  );
}
