import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../config/duration.js';
import type { Env } from '../context.js';
import { runGit } from '../git/exec.js';
import { EventLog } from '../ledger/events.js';
import { sha256Of } from '../ledger/reviewed.js';
import { type CommandResult, type CommandSandbox, runProjectCommand } from '../sandbox/command.js';
import { assertVerifyUsable, prepareRunPrivacy, type RunSandbox } from '../sandbox/prepare.js';
import { loadTrustedConfig } from '../trust/index.js';
import type { MergePlan } from './merge.js';

/*
 * A fetched run's "verify passed" is a claim; `merge --yes` checks it here instead of believing it:
 * the repository's own runs.verify (and runs.setup first), as the person configured and trusted
 * them, in the sandbox a fix run's commands get, on HEAD's files with the very patch merge would
 * apply (by its hash), in a folder of their own that goes when it is done. The working tree, the
 * index and the repository's git are not touched; the person's secrets are as unreadable as from a
 * fix run (src/sandbox/prepare.ts).
 */

export type VerifiedHere =
  /** Nothing to check with: runs.verify is not set, or the repository is not trusted. */
  | { readonly kind: 'none'; readonly why: string }
  | {
      readonly kind: 'passed' | 'failed';
      readonly command: string;
      /** `npm test exited 1: …` (its output's end) or `passed`. */
      readonly detail: string;
      readonly log: string;
    };

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** runs.verify on the patch of `plan` applied to HEAD, in a box; never throws for a failed check. */
export async function verifyHere(
  plan: MergePlan,
  env: Env,
  /** Told when a check starts (it may take minutes). */
  onStart: () => void = () => {},
): Promise<VerifiedHere> {
  const { config } = loadTrustedConfig({ repoRoot: plan.root, env });
  const { verify, setup } = config.runs;
  if (!verify)
    return {
      kind: 'none',
      why: 'runs.verify is not set in agentbox.yaml (or the repository is not trusted: agentbox trust)',
    };
  onStart();
  assertVerifyUsable(env, config.sandbox, verify);
  assertVerifyUsable(env, config.sandbox, setup, 'runs.setup');
  const privacy = await prepareRunPrivacy({
    env,
    runName: `${plan.run.name}-verify`,
    repoRoot: plan.root,
    worktree: null,
    fenced: true,
    config: config.sandbox,
  });
  const log = new EventLog(plan.run.dir);
  try {
    const tree = path.join(privacy.area.tmpDir, 'tree');
    const failed = await mergedTree(plan, tree, privacy.area.tmpDir, env);
    if (failed) return ended(log, plan, { kind: 'failed', command: verify, detail: failed, log: '' });
    const box = privacy.sandbox;
    const run = (command: string, name: string, domains: readonly string[], timeout: string) =>
      runProjectCommand({
        command,
        cwd: tree,
        env: commandEnv(env, plan.root, privacy.area.tmpDir),
        sandbox: box ? fence(box, plan.root, domains) : null,
        settingsFile: path.join(privacy.area.secretsDir, `${name}-sandbox.json`),
        logFile: path.join(plan.run.dir, 'raw', `${name}.log`),
        timeoutMs: parseDuration(timeout) ?? DEFAULT_TIMEOUT_MS,
      });
    if (setup) {
      const done = await run(setup, 'setup-here', config.runs.setup_domains, config.runs.setup_timeout);
      if (!done.ok) return ended(log, plan, outcome(done, `runs.setup "${setup}"`));
    }
    const done = await run(verify, 'verify-here', [], config.runs.verify_timeout);
    return ended(log, plan, outcome(done, `runs.verify "${verify}"`));
  } finally {
    privacy.area.dispose();
  }
}

/** HEAD's files, then the patch of exactly the hash checked; a string: why that failed. */
async function mergedTree(plan: MergePlan, tree: string, tmp: string, env: Env): Promise<string | null> {
  const bytes = fs.readFileSync(path.join(plan.run.dir, 'changes.patch'));
  if (sha256Of(bytes) !== plan.sha256) return 'its patch was replaced while it was being checked';
  const patch = path.join(tmp, 'changes.patch');
  fs.writeFileSync(patch, bytes);
  // The work folder outlives a crash (src/sandbox/private.ts): a tree left by one goes first.
  fs.rmSync(tree, { recursive: true, force: true });
  fs.mkdirSync(tree);
  const index = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  const read = await runGit(['read-tree', 'HEAD'], { cwd: plan.root, env, vars: index });
  const files = await runGit(['checkout-index', '--all', `--prefix=${tree}/`], {
    cwd: plan.root,
    env,
    vars: index,
  });
  if (read.exitCode !== 0 || files.exitCode !== 0)
    return `HEAD could not be copied: ${read.stderr}${files.stderr}`;
  // Outside any repository (the folder is in agentbox's private area): git apply as a plain patch.
  const apply = await runGit(['apply', '--binary', '--whitespace=nowarn', '--', patch], {
    cwd: tree,
    env,
    vars: { GIT_CEILING_DIRECTORIES: path.dirname(tree) },
  });
  return apply.exitCode === 0 ? null : `the patch does not apply to HEAD: ${apply.stderr.trim()}`;
}

/** A fix run's fence, around the folder here: its own temp dir writable, the secrets and the ledger not readable. */
function fence(box: RunSandbox, root: string, domains: readonly string[]): CommandSandbox {
  return {
    writable: [box.tmpDir, box.sockDir],
    denyWrite: [box.mainGitDir, ...box.runtimeWritable],
    denyRead: [path.join(root, '.agents'), ...box.denyRead],
    // Reads are denied by default (src/sandbox/read-allowlist.ts): the box's allowlist, its temp dir among them.
    allowRead: box.allowRead,
    allowedDomains: [...new Set([...box.allowedDomains, ...domains])],
    tmpDir: box.sockDir,
  };
}

/** What the commands get: the person's PATH and locale, a home to read, caches in the box's temp dir. */
function commandEnv(env: Env, root: string, tmp: string): Record<string, string> {
  const kept = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TERM'];
  return {
    ...Object.fromEntries(kept.flatMap((k) => (env[k] === undefined ? [] : [[k, env[k] as string]]))),
    TMPDIR: tmp,
    npm_config_cache: path.join(tmp, 'npm-cache'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    AGENTBOX_REPO_ROOT: root,
  };
}

function outcome(done: CommandResult, what: string): VerifiedHere {
  const how = done.timedOut ? 'timed out' : `exit code ${done.exitCode ?? '?'}`;
  const tail = done.excerpt.trim().split('\n').slice(-3).join(' / ');
  return {
    kind: done.ok ? 'passed' : 'failed',
    command: what,
    detail: done.ok ? 'passed' : `failed (${how})${tail ? `: ${tail}` : ''}`,
    log: done.logFile,
  };
}

/** Every check here is logged in the run's events, with the hash of the patch it checked. */
function ended(log: EventLog, plan: MergePlan, v: VerifiedHere): VerifiedHere {
  if (v.kind !== 'none')
    log.append({
      event: 'verified_here',
      ok: v.kind === 'passed',
      command: v.command,
      detail: v.detail,
      patch_sha256: plan.sha256,
    });
  return v;
}
