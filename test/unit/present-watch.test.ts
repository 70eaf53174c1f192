import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/ledger/events.js';
import { readRun, updateState } from '../../src/ledger/index.js';
import { followRun, type RunSighting } from '../../src/present/watch.js';
import { cli, create, idSequence, ledgerRepo } from './fixtures/ledger.js';

async function sightings(iterable: AsyncIterable<RunSighting>): Promise<RunSighting[]> {
  const out: RunSighting[] = [];
  for await (const seen of iterable) out.push(seen);
  return out;
}

const toolUse = (name: string, input: object) =>
  JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't', name, input }] } });

describe('followRun (src/present/watch.ts)', () => {
  it('a finished run: its tool calls, its events, then how it ended, as data', async () => {
    const { repo, ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('aaaaaa') });
    fs.writeFileSync(
      path.join(run.dir, 'raw', 'stream.jsonl'),
      `${toolUse('Read', { file_path: 'src/a.ts' })}\nnot json\n${toolUse('Bash', {})}\n`,
    );
    new EventLog(run.dir).append({ event: 'stop_requested', by: 'agentbox stop' });
    await updateState(ledger, run, {
      status: 'ABORTED',
      failure: { kind: 'killed', message: 'stopped by agentbox stop' },
    });
    const seen = await sightings(followRun(readRun(ledger, run.name), 1));
    expect(seen.filter((s) => s.kind === 'tool')).toEqual([
      { kind: 'tool', name: 'Read', target: 'src/a.ts' },
      { kind: 'tool', name: 'Bash', target: null },
    ]);
    expect(seen.filter((s) => s.kind === 'event').map((s) => s.kind === 'event' && s.event.event)).toContain(
      'stop_requested',
    );
    expect(seen.at(-1)).toEqual({
      kind: 'ended',
      status: 'ABORTED',
      failure: { kind: 'killed', message: 'stopped by agentbox stop' },
    });
    // The command prints the same run, ending with its exit code.
    const watched = await cli(repo.dir, ['watch', 'aaaaaa']);
    expect(watched.code).toBe(1);
    expect(watched.stdout).toMatch(/\] Read src\/a\.ts\n.*\] Bash\n/s);
    expect(watched.stdout).toContain('] stop requested (agentbox stop)\n');
    expect(watched.stdout).toContain('✗ ');
  });

  it('a run whose process is gone without recording an end: "gone"', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'why?', '2026-01-01T09:00:00Z', { ids: idSequence('bbbbbb') });
    // A pid that was alive a moment ago and is not now.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await updateState(ledger, run, { pid: Number(dead.stdout.toString()), pid_start: null });
    expect(await sightings(followRun(readRun(ledger, run.name), 1))).toEqual([{ kind: 'gone' }]);
  });
});
