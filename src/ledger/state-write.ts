import path from 'node:path';
import { writeAtomic } from '../util/fs.js';
import { STATE_FILE, serializeState } from './state.js';
import type { RunState } from './types.js';

// Apart from state.ts so that readers (`agentbox status`) do not load the atomic-write library.
export async function writeState(runDir: string, state: RunState): Promise<void> {
  await writeAtomic(path.join(runDir, STATE_FILE), serializeState(state));
}
