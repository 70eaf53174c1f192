import { AgentboxError } from '../errors.js';
import { runGit } from '../git/exec.js';
import type { Env } from '../util/env.js';

/** The repository a Job is made from, and the command's environment git runs with. */
export interface Origin {
  readonly root: string;
  readonly env: Env;
}

const git = (at: Origin, args: string[]) => runGit(args, { cwd: at.root, env: at.env });

/** The URL of `remote` in the repository at `root`. */
export async function remoteUrl(at: Origin, remote = 'origin'): Promise<string> {
  const root = at.root;
  const result = await git(at, ['remote', 'get-url', remote]);
  if (result.exitCode !== 0) {
    throw new AgentboxError('USAGE', `the repository ${root} has no remote "${remote}" to clone from`, {
      hint: 'add one (git remote add origin <url>), or pass the URL: agentbox k8s job … --repo <https-url>',
    });
  }
  return result.stdout.trim();
}

/** `rev` as a full commit id. */
export async function commitOf(at: Origin, rev: string): Promise<string> {
  const root = at.root;
  const result = await git(at, ['rev-parse', '-q', '--verify', `${rev}^{commit}`]);
  if (result.exitCode !== 0) {
    throw new AgentboxError('BAD_REVISION', `"${rev}" is not a commit in ${root}`, {
      hint: 'pass a commit, branch or tag that exists: agentbox k8s job … --commit <rev>',
    });
  }
  return result.stdout.trim();
}

/** Whether a remote-tracking branch holds `sha`: else a pod cloning the remote will not find it. */
export async function isOnRemote(at: Origin, sha: string): Promise<boolean> {
  const result = await git(at, ['branch', '--remotes', '--contains', sha]);
  return result.exitCode === 0 && result.stdout.trim() !== '';
}
