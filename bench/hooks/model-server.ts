import { spawn } from 'node:child_process';
import path from 'node:path';
import { processesWithEnv } from '../../test/helpers/processes.js';
import type { Call } from '../hooks-lib.js';
import { BENCH_TAG, BENCH_VAR } from './config.js';

/**
 * The scripted model server in a child process (bench/model-child.ts), so that the endpoint and the
 * stream reader here never hold up the model's answers. It carries the bench's tag, to be reaped.
 */
export async function startModelChild(): Promise<{
  url: string;
  script: (calls: readonly Call[]) => Promise<void>;
  close: () => Promise<void>;
}> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, '..', 'model-child.ts')],
    {
      env: { ...process.env, [BENCH_VAR]: BENCH_TAG },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`model server exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m as Record<string, unknown>);
      });
    });
  const { url } = await next();
  return {
    url: String(url),
    script: async (calls) => {
      const answer = next();
      child.send({ calls });
      await answer;
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
      // Its esbuild service ends when it notices its parent gone; give it the moment.
      for (let i = 0; i < 20 && processesWithEnv(BENCH_VAR, BENCH_TAG).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
