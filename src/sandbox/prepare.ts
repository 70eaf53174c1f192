import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import { createPrivateGit } from '../git/private.js';
import { probeSandbox, probeVerifySandbox, type SandboxEnv } from './available.js';
import { absentBefore, leftoverCandidates, removeEmpty } from './leftovers.js';
import { createPrivateArea, type PrivateArea, privateBase } from './private.js';
import { HOME_SECRETS } from './settings.js';

/**
 * Fail closed: a fix run (it runs shell commands without asking) starts only where Claude Code's
 * sandbox works, unless the person opted out in agentbox.yaml (`sandbox.mode: off`). Checked before
 * any run folder exists.
 */
export function assertSandboxUsable(env: SandboxEnv, config: Config['sandbox']): void {
  if (config.mode === 'off') return;
  const probe = probeSandbox(env);
  if (!probe.ok) {
    throw new AgentboxError(
      'SANDBOX_UNAVAILABLE',
      `fix runs need Claude Code's sandbox, and it cannot work here: ${probe.problem}`,
      {
        hint: `${probe.fix}; or, where this machine is itself the sandbox, opt out in agentbox.yaml (sandbox: { mode: off }), or for one CI job or container with AGENTBOX_SANDBOX=container in its environment. agentbox doctor checks this`,
      },
    );
  }
}

/**
 * runs.verify and runs.setup run in the sandbox runtime: a fix run with one refuses to start where
 * that cannot work.
 */
export function assertVerifyUsable(
  env: SandboxEnv,
  config: Config['sandbox'],
  verify: string | null,
  key: 'runs.verify' | 'runs.setup' = 'runs.verify',
): void {
  if (!verify || config.mode === 'off') return;
  const probe = probeVerifySandbox(env);
  if (!probe.ok) {
    throw new AgentboxError('SANDBOX_UNAVAILABLE', `${key} ("${verify}") cannot run: ${probe.problem}`, {
      hint: `${probe.fix}. agentbox doctor checks this`,
    });
  }
}

/** `~/x` → `<home>/x`; other relative paths are relative to the repository. */
function expand(p: string, home: string | undefined, repoRoot: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(home ?? '/', p.slice(1));
  return path.resolve(repoRoot, p);
}

/** Where a run's settings (they carry the token) and the hook script's address book go. */
export interface RunSecrets {
  readonly root: string;
  readonly settingsFile: string;
  readonly hookFile: string;
}

/** What the sandbox of a fix run must fence. Paths exist (see src/sandbox/settings.ts). */
export interface RunSandbox {
  readonly gitDir: string;
  readonly tmpDir: string;
  readonly mainGitDir: string;
  readonly denyRead: readonly string[];
  readonly allowedDomains: readonly string[];
}

export interface RunPrivacy {
  readonly area: PrivateArea;
  readonly secrets: RunSecrets;
  /** null: no sandbox (a read-only run or session, or the person opted out). */
  readonly sandbox: RunSandbox | null;
}

/**
 * The run's private area (secrets, the agent's git and temp dir) and, for a fix run with the
 * sandbox on, what the sandbox must fence. Dispose `area` when the run ends.
 */
export async function prepareRunPrivacy(opts: {
  readonly env: SandboxEnv;
  readonly runName: string;
  readonly repoRoot: string;
  readonly worktree: string | null;
  readonly config: Config['sandbox'];
}): Promise<RunPrivacy> {
  const uid = process.getuid?.() ?? 0;
  const area = createPrivateArea(privateBase(opts.env, uid), opts.runName);
  const secrets = {
    root: area.secretsRoot,
    settingsFile: path.join(area.secretsDir, 'settings.json'),
    hookFile: path.join(area.secretsDir, 'hook.json'),
  };
  if (!opts.worktree || opts.config.mode === 'off') return { area, secrets, sandbox: null };
  try {
    const common = await git(['rev-parse', '--git-common-dir'], { cwd: opts.repoRoot });
    const mainGitDir = fs.realpathSync(path.resolve(opts.repoRoot, common.trim()));
    const own = await git(['rev-parse', '--git-dir'], { cwd: opts.worktree });
    const leftovers = absentBefore(
      leftoverCandidates({
        repoRoot: opts.repoRoot,
        mainGitDir,
        worktree: opts.worktree,
        worktreeGitDir: path.resolve(opts.worktree, own.trim()),
      }),
    );
    area.onDispose(() => removeEmpty(leftovers));
    await createPrivateGit({
      worktree: opts.worktree,
      gitDir: area.gitDir,
      branch: `agentbox/${opts.runName}`,
    });
    const wanted = [
      ...HOME_SECRETS.map((p) => path.join(opts.env.HOME ?? '/', p)),
      ...opts.config.deny_read.map((p) => expand(p, opts.env.HOME, opts.repoRoot)),
      area.secretsRoot,
    ];
    // Only paths that exist (see src/sandbox/settings.ts).
    const denyRead = [...new Set(wanted)].filter((p) => fs.existsSync(p));
    return {
      area,
      secrets,
      sandbox: {
        gitDir: area.gitDir,
        tmpDir: area.tmpDir,
        mainGitDir,
        denyRead,
        allowedDomains: opts.config.allowed_domains,
      },
    };
  } catch (error) {
    area.dispose();
    throw error;
  }
}
