import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunDetails, RunState } from '../../src/ledger/index.js';
import { pendingRevisionTurn, sessionBlocker } from '../../src/run/revise.js';
import { tempDir } from '../helpers/git-repo.js';

/**
 * A run taken up again (resume, recover) in the middle of revision k: the revision's message goes
 * again only when Claude Code's transcript of the session does not hold it (claude died before it
 * recorded the turn), so a revision cut off at its start is not lost, and one under way is not sent twice.
 */
describe('pendingRevisionTurn', () => {
  const config = tempDir('agentbox-claude-config-');
  const runDir = tempDir('agentbox-run-');
  const env = { CLAUDE_CONFIG_DIR: config };
  const session = '0b0e9a52-1111-4222-8333-944455556666';
  const transcript = path.join(config, 'projects', '-wt-run', `${session}.jsonl`);
  const message = '<!-- agentbox: revision 3 (agentbox revise) -->\nA person reviewed your change…\n';
  fs.mkdirSync(path.join(runDir, 'revisions', '3'), { recursive: true });
  fs.writeFileSync(path.join(runDir, 'revisions', '3', 'prompt.md'), message);
  const state = (revision: number | null) =>
    ({ session_id: session, revision: revision ? { number: revision } : null }) as unknown as RunState;
  const line = (text: string) =>
    `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;

  it.each([
    ['no transcript at all', null, 3, message],
    ['a transcript of revision 2 only', line('<!-- agentbox: revision 2 (agentbox revise) -->'), 3, message],
    ['a transcript that holds the revision', line(message), 3, undefined],
    ['a run that is not being revised', null, null, undefined],
  ])('%s', (_what, content, revision, want) => {
    fs.rmSync(path.join(config, 'projects'), { recursive: true, force: true });
    if (content !== null) {
      fs.mkdirSync(path.dirname(transcript), { recursive: true });
      fs.writeFileSync(transcript, content);
    }
    expect(pendingRevisionTurn(runDir, state(revision), env)).toBe(want);
  });

  it('sessionBlocker refuses a run whose session has no transcript left, before anything changes', () => {
    const run = {
      name: 'r__abc123',
      meta: { run_id: 'abc123' },
      state: { session_id: session },
    } as unknown as RunDetails;
    fs.rmSync(path.join(config, 'projects'), { recursive: true, force: true });
    expect(() => sessionBlocker(run, env)).toThrow(
      `the Claude Code session of r__abc123 is gone: no transcript of ${session}`,
    );
    fs.mkdirSync(path.dirname(transcript), { recursive: true });
    fs.writeFileSync(transcript, line('hello'));
    expect(() => sessionBlocker(run, env)).not.toThrow();
  });
});
