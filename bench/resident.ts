/**
 * The resident agentbox for a bench (docs/resident.md), started as a person's first command starts
 * it: that command (a cold one, `AGENTBOX_RESIDENT=1` standing for the person's terminal) runs
 * itself and, as it exits, starts `agentbox serve --idle 15m` in the background; ready once its log
 * says so; stopped with `agentbox serve --stop` (its runs stop first).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Resident {
  stop(): Promise<void>;
}

export async function startResident(
  bin: string,
  env: Record<string, string>,
  cwd: string,
  /** The person's first command, e.g. `['scout', '…']`. */
  first: readonly string[],
): Promise<Resident> {
  const started = await run(bin, first, cwd, { ...env, AGENTBOX_RESIDENT: '1' });
  if (!/started a resident agentbox \(pid \d+\)/.test(started))
    throw new Error(`the first command started no resident agentbox:\n${started}`);
  const state = env.XDG_STATE_HOME
    ? path.join(env.XDG_STATE_HOME, 'agentbox')
    : path.join(env.HOME!, '.local', 'state', 'agentbox');
  const dir = path.join(state, 'resident');
  const ready = () =>
    fs.existsSync(dir) &&
    fs
      .readdirSync(dir)
      .some(
        (name) =>
          name.endsWith('.log') &&
          fs.readFileSync(path.join(dir, name), 'utf8').includes('agentbox serve: ready'),
      );
  const deadline = Date.now() + 20_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`the resident agentbox did not get ready (its log in ${dir})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    async stop() {
      const stopped = await run(bin, ['serve', '--stop'], cwd, env);
      if (!stopped.includes('stopped')) throw new Error(`agentbox serve --stop failed:\n${stopped}`);
    },
  };
}

/** `agentbox <args>`'s output, both streams. */
function run(
  bin: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      output += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      output += text;
    });
    child.once('error', reject);
    child.once('close', () => resolve(output));
  });
}
