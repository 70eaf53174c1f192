import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../context.js';
import { AgentboxError } from '../errors.js';
import type { Ledger } from '../ledger/paths.js';
import { readRun } from '../ledger/read.js';
import { shortTask } from '../ledger/text.js';
import { terminalText } from '../util/terminal-text.js';
import { type GitCall, git, gitRaw, publisherIdentity } from './git.js';
import { MAX_RUN_FILES } from './read.js';
import { isPublished, runRef } from './refs.js';
import { writePublicationTree } from './tree.js';

export interface PublishOptions {
  readonly env: Env;
  /** Include raw/ (transcripts, logs): left out unless asked, they are large and verbose. */
  readonly raw: boolean;
  /** The machine's name, recorded in the publication (shown where the run is fetched). */
  readonly host: string;
}

export interface Publication {
  readonly run: string;
  readonly commit: string;
  /** false: the run had not changed since its last publication (the ref was left as it was). */
  readonly changed: boolean;
}

/**
 * Records a run's ledger folder as a commit on refs/agentbox/runs/<run>, parented on its last
 * publication. Built with plumbing in a private index: nobody's index, working tree or branch is
 * touched, no hook runs. Only regular files are taken (a symlink in artifacts/ is never followed).
 */
export async function publishRun(ledger: Ledger, name: string, opts: PublishOptions): Promise<Publication> {
  const run = readRun(ledger, name);
  if (run.meta.origin) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} ran on ${run.meta.origin.host} and was fetched from ${run.meta.origin.remote}: only the machine it ran on publishes it`,
      { hint: `it is there already: agentbox fetch ${run.meta.origin.remote}` },
    );
  }
  const call: GitCall = { cwd: ledger.root, env: opts.env };
  const files = regularFiles(run.dir).filter((file) => isPublished(file, opts.raw));
  // Where it is fetched, a publication of more files is refused (src/remote/read.ts): say it here.
  if (files.length + 1 > MAX_RUN_FILES) {
    throw new AgentboxError(
      'USAGE',
      `run ${name} has ${files.length} files to publish: a publication holds at most ${MAX_RUN_FILES} (its publication.json included), and a fetch refuses more`,
      { hint: `look at what fills ${run.dir} (artifacts/?), remove what need not travel, then push again` },
    );
  }
  const ref = runRef(name);
  const previous = (await gitRaw(call, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout
    .toString()
    .trim();
  const tree = await writePublicationTree(
    call,
    run.dir,
    files,
    publicationText(opts.host, run.meta.agentbox_version),
  );
  if (previous && (await git(call, ['rev-parse', `${previous}^{tree}`])) === tree) {
    return { run: name, commit: previous, changed: false };
  }
  const status = run.state?.status ?? 'NO STATE';
  const message = `agentbox run ${name}: ${status}\n\n${terminalText(shortTask(run.meta.task))}\n`;
  const commit = await git({ ...call, extra: await publisherIdentity(call), input: message }, [
    'commit-tree',
    tree,
    ...(previous ? ['-p', previous] : []),
    '-F',
    '-',
  ]);
  // The old value guards against a concurrent publication of the same run: git refuses then.
  await git(call, ['update-ref', '-m', 'agentbox: publish the run', ref, commit, previous]);
  return { run: name, commit, changed: true };
}

/** What the publication says about itself. No time in it: an unchanged run gives the same tree. */
export function publicationText(host: string, version: string): string {
  return `${JSON.stringify({ schema_version: 1, host, agentbox_version: version })}\n`;
}

/** Regular files under `dir`, relative with `/`, sorted; symlinks and other kinds are skipped. */
export function regularFiles(dir: string, rel = ''): string[] {
  const entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
  return entries
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const file = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) return regularFiles(dir, file);
      return entry.isFile() ? [file] : [];
    });
}
