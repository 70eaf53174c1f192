import fs from 'node:fs';
import path from 'node:path';
import type { RunState } from '../ledger/types.js';
import { createAtomicSync } from '../util/fs.js';

/**
 * A report for a run that died before writing its own: what happened and how to go on. Never
 * replaces a report (a resumed run writes the real one, maybe meanwhile); created whole or not at all.
 */
export function writeCrashReport(runDir: string, name: string, state: RunState, detail: string): void {
  const report = path.join(runDir, 'report.md');
  if (fs.existsSync(report)) return;
  const type = state.summary?.type ?? 'run';
  const text = [
    `# ${type}: ${state.summary?.task ?? name}`,
    '',
    `- run: \`${name}\` (${type})`,
    `- status: **CRASHED** — crashed: ${detail}`,
    '',
    'The run stopped before it could write its report.' +
      (state.worktree_path ? ` Its changes so far are in its worktree, ${state.worktree_path}.` : ''),
    `Continue it with \`agentbox resume ${name.slice(-6)}\`, or let \`agentbox recover\` decide.`,
    '',
  ].join('\n');
  try {
    createAtomicSync(report, text);
  } catch {
    // The ledger is not writable: the state says what happened.
  }
}
