import { AgentboxError } from '../errors.js';
import { type GitCall, git, gitFailed, gitRaw } from './git.js';
import { branchRef, fetchRefspecs, pushRefspecs, runRef } from './refs.js';

/*
 * The three conversations with the remote: push a run, fetch every run, delete a run's refs.
 */

/**
 * Pushes the run's ledger ref, and its branch when it has one, in one atomic push: the remote
 * gets both or neither. A rejected ledger ref is another machine's run under the same name.
 */
export async function pushRun(call: GitCall, remote: string, run: string): Promise<{ branch: boolean }> {
  const branch =
    (await gitRaw(call, ['rev-parse', '--verify', '--quiet', `${branchRef(run)}^{commit}`])).code === 0;
  const args = ['push', '--atomic', '--porcelain', '--no-verify', remote, ...pushRefspecs(run, branch)];
  const out = await gitRaw(call, args);
  if (out.code === 0) return { branch };
  const text = `${out.stdout.toString()}\n${out.stderr}`;
  if (/non-fast-forward|fetch first|\[rejected\]|stale info/.test(text)) {
    throw new AgentboxError(
      'GIT_FAILED',
      `${remote} already holds a run named ${run} with another history: nothing was pushed`,
      {
        hint: `another machine published a run of that name; see it with: git ls-remote ${remote} ${runRef(run)}`,
      },
    );
  }
  throw gitFailed(
    call.cwd,
    args,
    out.stderr,
    `check the remote (git remote -v) and your access to it, then: agentbox push ${run.slice(-6)} ${remote}`,
  );
}

/** Mirrors the remote's published runs and run branches into refs/agentbox/remotes/<remote>/. */
export async function fetchRefs(call: GitCall, remote: string): Promise<void> {
  await git(
    call,
    ['fetch', '--no-tags', '--prune', '--no-write-fetch-head', '--quiet', remote, ...fetchRefspecs(remote)],
    `check the remote (git remote -v) and your access to it, then: agentbox fetch ${remote}`,
  );
}

/**
 * Deletes a published run from the remote: its ledger ref and its branch, those that exist there,
 * in one atomic push. Returns the refs deleted.
 */
export async function deleteRemoteRun(call: GitCall, remote: string, run: string): Promise<string[]> {
  const refs = [runRef(run), branchRef(run)];
  const listed = await git(call, ['ls-remote', '--refs', remote, ...refs]);
  const present = listed
    .split('\n')
    .map((line) => line.split('\t')[1])
    .filter((ref): ref is string => ref !== undefined && refs.includes(ref));
  if (present.length > 0) {
    await git(call, [
      'push',
      '--atomic',
      '--no-verify',
      '--quiet',
      remote,
      ...present.map((ref) => `:${ref}`),
    ]);
  }
  return present;
}
