import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';

/** Where the ledger of one repository lives. Every path is absolute. */
export interface Ledger {
  /** The main working tree's root. */
  readonly root: string;
  /** `<root>/.agents` */
  readonly dir: string;
  readonly runsDir: string;
  readonly pointersDir: string;
  readonly indexMd: string;
  readonly indexJsonl: string;
  /** The `latest` symlink. */
  readonly latest: string;
}

export const LEDGER_DIR = '.agents';

export function ledgerPaths(root: string): Ledger {
  const dir = path.join(root, LEDGER_DIR);
  return {
    root,
    dir,
    runsDir: path.join(dir, 'runs'),
    pointersDir: path.join(dir, 'pointers'),
    indexMd: path.join(dir, 'INDEX.md'),
    indexJsonl: path.join(dir, 'INDEX.jsonl'),
    latest: path.join(dir, 'latest'),
  };
}

export function notInitialized(root: string): AgentboxError {
  return new AgentboxError('NOT_INITIALIZED', `agentbox is not set up in ${root} — run "agentbox init"`);
}

/** The ledger of the repository at `repoRoot`; throws NOT_INITIALIZED when `init` never ran there. */
export function openLedger(repoRoot: string): Ledger {
  const ledger = ledgerPaths(repoRoot);
  let isDir = false;
  try {
    isDir = fs.statSync(ledger.runsDir).isDirectory();
  } catch {
    // Missing (or unreadable) runs/ means the same to the user: init has not run here.
  }
  if (!isDir) throw notInitialized(repoRoot);
  return ledger;
}
