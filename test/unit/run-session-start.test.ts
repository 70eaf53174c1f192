import { describe, expect, it } from 'vitest';
import { parseStreamLine } from '../../src/claude/stream.js';
import { type SessionLaunch, sessionStartEntry } from '../../src/run/begin/session-start.js';

const INIT = JSON.stringify({
  type: 'system',
  subtype: 'init',
  session_id: 's-1',
  tools: [],
  slash_commands: [],
});
const COMPACT = JSON.stringify({
  type: 'system',
  subtype: 'compact_boundary',
  compact_metadata: { trigger: 'auto' },
});

describe('sessionStartEntry', () => {
  it.each<[string, string, string | null, SessionLaunch, Record<string, unknown> | null]>([
    [
      'a new session',
      INIT,
      null,
      'startup',
      { event: 'SessionStart', session_id: 's-1', source: 'startup', via: 'stream' },
    ],
    [
      'a resumed session',
      INIT,
      null,
      'resume',
      { event: 'SessionStart', session_id: 's-1', source: 'resume', via: 'stream' },
    ],
    [
      'a compaction',
      COMPACT,
      's-1',
      'startup',
      { event: 'SessionStart', session_id: 's-1', source: 'compact', via: 'stream' },
    ],
    [
      'another system line',
      JSON.stringify({ type: 'system', subtype: 'hook_started', hook_event: 'Stop' }),
      's-1',
      'startup',
      null,
    ],
    [
      'an assistant line',
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'hi' }] } }),
      's-1',
      'startup',
      null,
    ],
    [
      'an init without a session id',
      JSON.stringify({ type: 'system', subtype: 'init' }),
      null,
      'startup',
      null,
    ],
  ])('%s', (_, line, sessionId, launch, expected) => {
    const entries = parseStreamLine(line).map((e) => sessionStartEntry(e, sessionId, launch));
    expect(entries.find((e) => e !== null) ?? null).toEqual(expected);
  });
});
