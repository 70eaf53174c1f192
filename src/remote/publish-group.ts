import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { readGroup } from '../group/store.js';
import { readMeta } from '../ledger/meta.js';
import type { Ledger } from '../ledger/paths.js';
import { shortTask } from '../ledger/text.js';
import { terminalText } from '../util/terminal-text.js';
import { type GitCall, git, gitRaw, publisherIdentity } from './git.js';
import { type PublishOptions, publishRun, regularFiles } from './publish.js';
import { groupRef, isGroupFile } from './refs.js';
import { writePublicationTree } from './tree.js';

/** One attempt in a group's publication: the commit of its run's publication it was published with. */
export interface PublishedAttempt {
  readonly attempt: number;
  readonly run: string;
  readonly commit: string;
}

export interface GroupPublication {
  readonly group: string;
  readonly commit: string;
  readonly changed: boolean;
  readonly attempts: readonly PublishedAttempt[];
}

/**
 * Publishes a group whole: each attempt's run as `agentbox push` publishes a run, then the group's
 * folder as a commit on refs/agentbox/groups/<group> whose parents are its last publication and
 * every attempt's publication. NOTE: the parents are what makes it one unit: git never holds (nor
 * fetches) a group's commit without every commit it names, so a fetch cannot see half a group.
 * publication.json lists the attempts and their commits, for the fetch side to check.
 */
export async function publishGroup(
  ledger: Ledger,
  name: string,
  opts: PublishOptions,
): Promise<GroupPublication> {
  const group = readGroup(ledger, name);
  if (group.meta.origin) {
    throw new AgentboxError(
      'USAGE',
      `group ${name} ran on ${group.meta.origin.host} and was fetched from ${group.meta.origin.remote}: only the machine it ran on publishes it`,
      { hint: `it is there already: agentbox fetch ${group.meta.origin.remote}` },
    );
  }
  const attempts: PublishedAttempt[] = [];
  for (const member of group.state.members) {
    if (member.run === null) continue;
    if (!readMeta(path.join(ledger.runsDir, member.run))) {
      throw new AgentboxError(
        'RUN_NOT_FOUND',
        `group ${name}: attempt ${member.attempt}'s run ${member.run} is not in this ledger: the group cannot be published whole`,
        { hint: 'a group is published with every attempt it started; nothing was pushed' },
      );
    }
    const published = await publishRun(ledger, member.run, opts);
    attempts.push({ attempt: member.attempt, run: member.run, commit: published.commit });
  }
  const call: GitCall = { cwd: ledger.root, env: opts.env };
  const files = regularFiles(group.dir).filter((f) => isGroupFile(f, group.meta.attempts));
  const ref = groupRef(name);
  const previous = (await gitRaw(call, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout
    .toString()
    .trim();
  const text = groupPublicationText(opts.host, group.meta.agentbox_version, attempts);
  const tree = await writePublicationTree(call, group.dir, files, text);
  if (previous && (await git(call, ['rev-parse', `${previous}^{tree}`])) === tree)
    return { group: name, commit: previous, changed: false, attempts };
  const message = `agentbox group ${name}: ${group.state.status}, ${attempts.length} of ${group.meta.attempts} attempt(s)\n\n${terminalText(shortTask(group.meta.task))}\n`;
  const parents = [previous, ...attempts.map((a) => a.commit)].filter(Boolean).flatMap((c) => ['-p', c]);
  const commit = await git({ ...call, extra: await publisherIdentity(call), input: message }, [
    'commit-tree',
    tree,
    ...parents,
    '-F',
    '-',
  ]);
  await git(call, ['update-ref', '-m', 'agentbox: publish the group', ref, commit, previous]);
  return { group: name, commit, changed: true, attempts };
}

/** What a group's publication says about itself: who published it, and its attempts. Pure. */
export function groupPublicationText(
  host: string,
  version: string,
  attempts: readonly PublishedAttempt[],
): string {
  return `${JSON.stringify({ schema_version: 1, host, agentbox_version: version, attempts })}\n`;
}
