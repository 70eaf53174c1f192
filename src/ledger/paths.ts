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

/** A folder of the ledger that is something else (a file, a link): the ledger is damaged. */
export function notAFolder(dir: string): AgentboxError {
  return new AgentboxError('RUN_CORRUPT', `${dir} is not a folder: the run ledger is damaged`, {
    hint: `look at it (ls -l ${dir}), move it aside (mv ${dir} ${dir}.damaged), then agentbox init makes the folder again`,
  });
}

/** The ledger of the repository at `repoRoot`; throws NOT_INITIALIZED when `init` never ran there. */
export function openLedger(repoRoot: string): Ledger {
  const ledger = ledgerPaths(repoRoot);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(ledger.runsDir);
  } catch {
    // Missing (or unreadable) runs/ means the same to the user: init has not run here.
  }
  if (!stat) throw notInitialized(repoRoot);
  if (!stat.isDirectory()) throw notAFolder(ledger.runsDir);
  return ledger;
}
