/**
 * `agentbox serve` for a bench (docs/resident.md): started with the bench's environment, ready
 * once it printed so, stopped as a person stops it (Ctrl-C: its runs stop first).
 */
import { spawn } from 'node:child_process';

export interface Resident {
  stop(): Promise<void>;
}

export async function startResident(
  bin: string,
  env: Record<string, string>,
  cwd: string,
): Promise<Resident> {
  const child = spawn(process.execPath, [bin, 'serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentbox serve did not start:\n${output}`)), 20_000);
    const look = () => {
      if (output.includes('agentbox serve: ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', look);
    void exited.then(() => reject(new Error(`agentbox serve exited:\n${output}`)));
  });
  return {
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
