import type { StreamEvent } from '../../claude/stream.js';

/** How claude was launched for this process of the run: a new session, or `--resume` of its own. */
export type SessionLaunch = 'startup' | 'resume';

/**
 * The SessionStart line of a headless run's events.jsonl, read from its stream: a headless run has
 * no SessionStart hook (src/endpoint/settings.ts says why). The init line starts the session (with
 * the source the hook would have had: how claude was launched); a compaction starts it again, as
 * Claude Code's own SessionStart `compact` does. Anything else: null. Pure.
 */
export function sessionStartEntry(
  event: StreamEvent,
  sessionId: string | null,
  launch: SessionLaunch,
): Record<string, unknown> | null {
  if (event.kind === 'init')
    return { event: 'SessionStart', session_id: event.sessionId, source: launch, via: 'stream' };
  if (event.kind === 'other' && event.type === 'system/compact_boundary')
    return { event: 'SessionStart', session_id: sessionId, source: 'compact', via: 'stream' };
  return null;
}
