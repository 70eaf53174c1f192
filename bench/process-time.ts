import { spawn } from 'node:child_process';

/** The middle value (the upper one of an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * A whole process, spawn to exit, in ms; it must succeed. Async, so a model server in this process
 * answers meanwhile.
 */
export function timeProcess(
  command: string,
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  input?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, argv, {
      cwd,
      env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
    });
    child.stdin?.end(input);
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - start)
        : reject(new Error(`${command} ${argv.join(' ')} exited ${code}:\n${stderr}`)),
    );
  });
}
