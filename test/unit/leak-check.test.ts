import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { askSupervisorModel } from '../../src/supervisor/model.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag, processesWithEnv } from '../helpers/processes.js';

// The tests' leak check ("leaves no process behind") must see every process agentbox started, the
// supervisor's own `claude -p` included, whose environment agentbox empties of its own variables.
const tags: string[] = [];
afterEach(() => {
  for (const tag of tags.splice(0)) killTagged(tag);
});

describe('the leak check', () => {
  it('catches a process leaked by a supervisor call, which the old check by AGENTBOX_TEST_TAG missed', async () => {
    const tag = newTestTag();
    tags.push(tag);
    const dir = tempDir('agentbox-leak-');
    // A stand-in for a `claude -p` that answers but leaves a process behind, out of its process
    // group and without agentbox's per-child mark, so that agentbox's own reaping misses it.
    const fake = path.join(dir, 'claude');
    fs.writeFileSync(
      fake,
      '#!/bin/sh\nenv -u AGENTBOX_PROCESS_MARK setsid sleep 31 </dev/null >/dev/null 2>&1 &\nsleep 0.3\necho "[COMPLETE]"\n',
      { mode: 0o755 },
    );
    const reply = await askSupervisorModel('decide', {
      bin: fake,
      model: null,
      timeoutMs: 10_000,
      env: { PATH: process.env.PATH, AGENTBOX_TEST_TAG: tag, AGENTBOX_LINEAGE: tag },
    });
    expect(reply).toMatchObject({ ok: true, output: '[COMPLETE]\n' });
    // The supervisor call drops AGENTBOX_TEST_TAG: a check by that variable alone sees nothing.
    expect(processesWithEnv('AGENTBOX_TEST_TAG', tag)).toEqual([]);
    await expect(expectNoProcessesLeft(tag, 300)).rejects.toThrow(
      /1 process\(es\) tagged .* still running[\s\S]*sleep 31/,
    );
    killTagged(tag);
    await expectNoProcessesLeft(tag, 3000);
  });
});
