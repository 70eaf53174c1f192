import fs from 'node:fs';
import path from 'node:path';

/**
 * A fix run's own folder for notes and evidence, inside its worktree (the agent may write there,
 * and nowhere in the main repository). Left out of changes.patch; filed into the run's ledger
 * folder as `artifacts/` when the run ends.
 */
export const AGENT_RUN_DIR = '.agentbox-run';

/** The RUN_DIR the agent is told about: its artifact folder in a fix run, the ledger folder otherwise. */
export function agentRunDir(worktree: string | null, ledgerRunDir: string): string {
  return worktree ? path.join(worktree, AGENT_RUN_DIR) : ledgerRunDir;
}

/** Copies what the agent left in its artifact folder into `<run>/artifacts/`; returns the files. */
export function collectArtifacts(worktree: string | null, ledgerRunDir: string): string[] {
  if (!worktree) return [];
  const from = path.join(worktree, AGENT_RUN_DIR);
  let entries: string[];
  try {
    entries = fs.readdirSync(from, { recursive: true }) as string[];
  } catch {
    return [];
  }
  const files = entries.filter((e) => fs.statSync(path.join(from, e)).isFile());
  if (files.length === 0) return [];
  fs.cpSync(from, path.join(ledgerRunDir, 'artifacts'), { recursive: true });
  return files.map((f) => path.join('artifacts', f));
}
