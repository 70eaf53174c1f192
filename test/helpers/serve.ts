import { type ChildProcess, spawn } from 'node:child_process';
import { AGENTBOX_BIN } from './bin.js';

/**
 * `agentbox serve` started in a test project's repository, with the project's environment: its
 * process and what it printed so far (standard output and error), each chunk also given to `onOutput`.
 */
export function startServe(
  p: { readonly repo: { readonly dir: string }; readonly env: Record<string, string> },
  onOutput?: (chunk: string) => void,
): { readonly child: ChildProcess; output(): string } {
  const child = spawn(process.execPath, [AGENTBOX_BIN, 'serve'], {
    cwd: p.repo.dir,
    env: p.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const take = (d: Buffer) => {
    out += d;
    onOutput?.(String(d));
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  return { child, output: () => out };
}

/** startServe, resolved once the server says it is ready (at most `ms`). */
export async function serveReady(
  p: Parameters<typeof startServe>[0],
  ms = 30_000,
): Promise<ReturnType<typeof startServe>> {
  const server = startServe(p);
  const deadline = Date.now() + ms;
  while (!server.output().includes('agentbox serve: ready')) {
    if (Date.now() > deadline || server.child.exitCode !== null)
      throw new Error(`agentbox serve did not get ready:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return server;
}
