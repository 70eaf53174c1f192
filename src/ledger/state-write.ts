import path from 'node:path';
import { writeAtomic, writeAtomicSync } from '../util/fs.js';
import { STATE_FILE, serializeState } from './state.js';
import type { RunState } from './types.js';

// Apart from state.ts so that readers (`agentbox status`) do not load the atomic-write library.
export async function writeState(runDir: string, state: RunState): Promise<void> {
  await writeAtomic(path.join(runDir, STATE_FILE), serializeState(state));
}

/**
 * The first state.json of a run being created: nothing else writes it yet, and nothing runs
 * meanwhile (the async write's round trips cost a run ~4 ms before claude could start).
 */
export function writeFirstState(runDir: string, state: RunState): void {
  writeAtomicSync(path.join(runDir, STATE_FILE), serializeState(state));
}
