import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { git } from '../git/exec.js';
import type { Env } from '../util/env.js';
import { terminalLine } from '../util/terminal-text.js';
import { LEDGER_DIR } from './paths.js';

/*
 * A ledger is this machine's own record. `init` has git ignore `.agents/`, but a repository's
 * author can commit theirs anyway (`git add -f`), and a clone then holds their runs: a state that
 * names your worktree, a pid, a socket, a log that links into your home, a patch waiting in REVIEW
 * as if your agent had written it. agentbox does not use such a ledger at all (each command's
 * handling of a run is bounded too: docs/security.md, "A ledger the repository carries"). What git
 * tracks decides, not the files' contents, which the author chose.
 */

/** How many of the tracked files the message names. */
const NAMED = 3;

/** The files under `.agents/` that git tracks in the repository at `root` (none: []). */
export async function carriedLedgerFiles(root: string, env?: Env): Promise<string[]> {
  const out = await git(['ls-files', '-z', '--cached', '--', LEDGER_DIR], { cwd: root, env });
  return out.split('\0').filter(Boolean);
}

/** Why a ledger that came with the repository is not used, and how to go on. Pure. */
export function carriedLedgerError(root: string, files: readonly string[]): AgentboxError {
  const named = files.slice(0, NAMED).map((f) => terminalLine(f));
  const more = files.length > NAMED ? `, … (${files.length} files)` : '';
  return new AgentboxError(
    'LEDGER_CARRIED',
    `${terminalLine(root)}: git tracks files in ${LEDGER_DIR}/ (${named.join(', ')}${more}): a ledger that came with the repository is its author's runs, not yours, and agentbox does not use it`,
    {
      hint: `keep them aside and start your own: git rm -r -q --cached ${LEDGER_DIR} && mv ${LEDGER_DIR} ${LEDGER_DIR}-from-git, then agentbox init (commit the removal, or leave it uncommitted; the files stay in ${LEDGER_DIR}-from-git)`,
    },
  );
}

/** Throws LEDGER_CARRIED when git tracks anything under the repository's `.agents/`. */
export async function refuseCarriedLedger(root: string, env?: Env): Promise<void> {
  const files = await carriedLedgerFiles(root, env);
  if (files.length > 0) throw carriedLedgerError(root, files);
}

/**
 * The folders of a ledger that agentbox makes itself (`''`: `.agents` itself). `groups` and
 * `remotes` too: `agentbox fetch` writes a remote's publications there (a group's folder, the
 * refusals' log), so a link there took a stranger's files out of the ledger.
 */
const OWN_FOLDERS = ['', 'runs', 'pointers', 'active', 'cache', 'groups', 'remotes'] as const;

/**
 * The ledger's own folders that are symbolic links (none: []). A ledger can arrive by other means
 * than git (an archive unpacked, then `git init`): `.agents/runs` naming a folder of the person's
 * home had agentbox create, list and delete runs there. Its folders are agentbox's own, never a
 * link; the files in a run folder are refused one by one (src/util/read-own.ts, append.ts).
 */
export function linkedLedgerParts(root: string): string[] {
  return OWN_FOLDERS.map((part) => path.join(LEDGER_DIR, part)).filter((rel) => {
    try {
      return fs.lstatSync(path.join(root, rel)).isSymbolicLink();
    } catch {
      return false;
    }
  });
}

/** Throws LEDGER_LINKED when a folder of the repository's ledger is a symbolic link. */
export function refuseLinkedLedger(root: string): void {
  const linked = linkedLedgerParts(root);
  if (linked.length === 0) return;
  const named = linked.map(
    (rel) => `${terminalLine(rel)} → ${terminalLine(linkTarget(path.join(root, rel)))}`,
  );
  throw new AgentboxError(
    'LEDGER_LINKED',
    `${terminalLine(root)}: ${named.join(', ')} ${linked.length === 1 ? 'is a symbolic link' : 'are symbolic links'}: agentbox keeps its ledger in folders of its own, never through a link, and does not use this one`,
    {
      hint: `look at it, then keep it aside and start your own: mv ${LEDGER_DIR} ${LEDGER_DIR}-linked, then agentbox init`,
    },
  );
}

function linkTarget(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return '?';
  }
}
