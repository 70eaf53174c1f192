import { AgentboxError } from '../errors.js';
import { REVIEWED_FILE } from '../ledger/reviewed.js';

/*
 * Where a published run lives in git, pure. On the remote: refs/agentbox/runs/<run> (the ledger
 * entry, one commit per publication) and refs/heads/agentbox/<run> (a fix run's branch). In a
 * clone that fetched them: refs/agentbox/remotes/<remote>/runs/<run> and …/heads/<run>.
 */

export const RUNS_NS = 'refs/agentbox/runs/';
/** A group's publication (issue 31): its folder, and every attempt's publication as a parent. */
export const GROUPS_NS = 'refs/agentbox/groups/';
export const BRANCH_NS = 'refs/heads/agentbox/';
/** The publication's own file: who published it (not imported into the run folder). */
export const PUBLICATION_FILE = 'publication.json';
export const DEFAULT_REMOTE = 'origin';

// A remote's name becomes part of a ref and of a file name: git's own rules are looser.
const REMOTE_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The remote's name, checked; throws USAGE for one that could not be a ref path component. */
export function checkRemoteName(remote: string): string {
  if (!REMOTE_RE.test(remote)) {
    throw new AgentboxError('USAGE', `invalid remote name ${JSON.stringify(remote.slice(0, 80))}`, {
      hint: 'name a configured git remote (git remote -v lists them), e.g. origin',
    });
  }
  return remote;
}

export const runRef = (run: string): string => `${RUNS_NS}${run}`;
export const branchRef = (run: string): string => `${BRANCH_NS}${run}`;
export const trackingRuns = (remote: string): string => `refs/agentbox/remotes/${remote}/runs/`;
export const trackingHeads = (remote: string): string => `refs/agentbox/remotes/${remote}/heads/`;
export const groupRef = (group: string): string => `${GROUPS_NS}${group}`;
export const trackingGroups = (remote: string): string => `refs/agentbox/remotes/${remote}/groups/`;

/** What `agentbox fetch` asks for: every published run, run branch and group, forced (a mirror). */
export function fetchRefspecs(remote: string): string[] {
  return [
    `+${RUNS_NS}*:${trackingRuns(remote)}*`,
    `+${BRANCH_NS}*:${trackingHeads(remote)}*`,
    `+${GROUPS_NS}*:${trackingGroups(remote)}*`,
  ];
}

/**
 * What `agentbox push` sends. The ledger ref is never forced: a remote ref with another history
 * is another machine's run of the same name, and git refuses. The branch is the run's own
 * (agentbox rewrites it when a result is recorded again), so it is forced.
 */
export function pushRefspecs(run: string, withBranch: boolean): string[] {
  return [`${runRef(run)}:${runRef(run)}`, ...(withBranch ? [`+${branchRef(run)}:${branchRef(run)}`] : [])];
}

/**
 * Whether a path from a published tree may become a file in a run folder: relative, no empty,
 * "." or ".." part, no control characters, and not the ledger's own files (written apart), nor
 * this machine's record of what its person was shown (a publication must not say "reviewed").
 * NOTE: the reserved names are compared by the path's first part and in any case: on a
 * case-insensitive file system (macOS, Windows) `REVIEWED.jsonl` is `reviewed.jsonl`, and
 * `reviewed.jsonl/x` would make a folder of this machine's record.
 */
export function safeEntryPath(file: string): boolean {
  if (file === '' || file.length > 255 || file.startsWith('/')) return false;
  if (/[\u0000-\u001f\u007f\\]/.test(file)) return false;
  const parts = file.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return false;
  const first = parts[0]!.toLowerCase();
  const own = ['meta.yaml', 'state.json', PUBLICATION_FILE, REVIEWED_FILE];
  return !own.includes(first) && !first.startsWith('state.json.');
}

/** A git identity from a publication's commit, fit to print on one line (at most 200 characters). */
export function displayIdentity(text: unknown): string {
  if (typeof text !== 'string') return 'unknown';
  const plain = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .trim();
  return plain === '' || plain === '<>' ? 'unknown' : plain.slice(0, 200);
}

/**
 * The files of a group's folder that are published and fetched: nothing else is taken from a
 * group's publication (its attempts come as runs). `attempts` bounds the patches' numbers.
 */
export function isGroupFile(file: string, attempts: number): boolean {
  if (['group.json', 'state.json', 'report.md'].includes(file)) return true;
  const k = /^patches\/agent_([1-9][0-9]?)\.patch$/.exec(file)?.[1];
  return k !== undefined && Number(k) <= attempts;
}

/** Whether a file of a run folder is published: everything but raw/ (unless asked) and temp files. */
export function isPublished(file: string, raw: boolean): boolean {
  if (!raw && (file === 'raw' || file.startsWith('raw/'))) return false;
  return safeEntryPath(file) || file === 'meta.yaml' || file === 'state.json';
}

/** A name a remote machine gave itself, fit to print on one line: at most 100 plain characters. */
export function displayHost(text: unknown): string {
  if (typeof text !== 'string') return 'unknown';
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  return plain === '' ? 'unknown' : plain.slice(0, 100);
}
