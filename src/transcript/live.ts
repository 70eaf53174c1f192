import os from 'node:os';
import { claudeConfigDir, findTranscript } from '../claude/transcript.js';
import type { RunDetails } from '../ledger/index.js';
import type { Env } from '../util/env.js';

/**
 * While an interactive session runs, its transcript is Claude Code's own file (copied into the run
 * when it ends, src/interactive/transcript-copy.ts): where that is, or null for any other run.
 */
export function liveTranscript(run: RunDetails, env: Env): string | null {
  if (run.meta.type !== 'interactive' || run.state?.status !== 'ACTIVE' || !run.state.session_id) return null;
  return findTranscript(claudeConfigDir(env, os.homedir()), run.state.session_id);
}
