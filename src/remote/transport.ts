import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { type GitCall, git, gitFailed, gitRaw } from './git.js';
import { branchRef, fetchRefspecs, groupRef, pushRefspecs, runRef } from './refs.js';

/*
 * The three conversations with the remote: push a run, fetch every run, delete a run's refs.
 */

/**
 * Pushes the run's ledger ref, and its branch when it has one, in one atomic push: the remote
 * gets both or neither. A rejected ledger ref is another machine's run under the same name.
 */
export async function pushRun(call: GitCall, remote: string, run: string): Promise<{ branch: boolean }> {
  const branch = await hasBranch(call, run);
  await pushAtomic(call, remote, pushRefspecs(run, branch), { what: 'run', name: run, ref: runRef(run) });
  return { branch };
}

/**
 * Pushes a group's publication with every attempt's ledger ref and branch, in one atomic push:
 * the remote holds the whole group or nothing of it. Returns the attempts whose branch went along.
 */
export async function pushGroup(
  call: GitCall,
  remote: string,
  group: string,
  runs: readonly string[],
): Promise<string[]> {
  const withBranch: string[] = [];
  const specs = [`${groupRef(group)}:${groupRef(group)}`];
  for (const run of runs) {
    const branch = await hasBranch(call, run);
    if (branch) withBranch.push(run);
    specs.push(...pushRefspecs(run, branch));
  }
  await pushAtomic(call, remote, specs, { what: 'group', name: group, ref: groupRef(group) });
  return withBranch;
}

async function hasBranch(call: GitCall, run: string): Promise<boolean> {
  return (await gitRaw(call, ['rev-parse', '--verify', '--quiet', `${branchRef(run)}^{commit}`])).code === 0;
}

/**
 * A remote given by name must be one of this repository's: git's own words for one that is not
 * were its whole command line and a fatal line, with no list to pick from. A URL or a path (it
 * holds `:` or `/`, or names a folder here) is git's to reach.
 */
async function checkRemote(call: GitCall, remote: string): Promise<void> {
  if (/[:/]/.test(remote) || fs.existsSync(path.resolve(call.cwd, remote))) return;
  if ((await gitRaw(call, ['remote', 'get-url', '--', remote])).code === 0) return;
  const names = (await gitRaw(call, ['remote'])).stdout.toString().split('\n').filter(Boolean);
  throw new AgentboxError('USAGE', `no git remote named ${remote} in ${call.cwd}`, {
    hint:
      names.length > 0
        ? `this repository's remotes: ${names.join(', ')} (git remote -v shows where each goes)`
        : 'this repository has no remote: add one (git remote add origin <url>), or give a URL',
  });
}

async function pushAtomic(
  call: GitCall,
  remote: string,
  specs: readonly string[],
  about: { readonly what: 'run' | 'group'; readonly name: string; readonly ref: string },
): Promise<void> {
  await checkRemote(call, remote);
  const args = ['push', '--atomic', '--porcelain', '--no-verify', remote, ...specs];
  const out = await gitRaw(call, args);
  if (out.code === 0) return;
  const text = `${out.stdout.toString()}\n${out.stderr}`;
  if (/non-fast-forward|fetch first|\[rejected\]|stale info/.test(text)) {
    throw new AgentboxError(
      'GIT_FAILED',
      `${remote} already holds a ${about.what} named ${about.name}${about.what === 'group' ? ' (or one of its runs)' : ''} with another history: nothing was pushed`,
      {
        hint: `another machine published a ${about.what} of that name; see it with: git ls-remote ${remote} ${about.ref}`,
      },
    );
  }
  throw gitFailed(
    call.cwd,
    args,
    out.stderr,
    `check the remote (git remote -v) and your access to it, then: agentbox push ${about.name.slice(-6)} ${remote}`,
  );
}

/** Mirrors the remote's published runs and run branches into refs/agentbox/remotes/<remote>/. */
export async function fetchRefs(call: GitCall, remote: string): Promise<void> {
  await checkRemote(call, remote);
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
export function deleteRemoteRun(call: GitCall, remote: string, run: string): Promise<string[]> {
  return deleteRemoteRefs(call, remote, [runRef(run), branchRef(run)]);
}

/** Deletes those of `refs` the remote holds, in one atomic push. Returns the refs deleted. */
export async function deleteRemoteRefs(
  call: GitCall,
  remote: string,
  refs: readonly string[],
): Promise<string[]> {
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
