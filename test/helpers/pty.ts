import fs from 'node:fs';
import path from 'node:path';
import pty from '@lydell/node-pty';
import { AGENTBOX_BIN } from './bin.js';
import { tempDir } from './git-repo.js';

/** `agentbox <args>` in a pseudo-terminal of its own, as a person would run it. */
export interface PtySession {
  /** Everything the terminal showed so far. */
  output(): string;
  write(data: string): void;
  /** Types text, pauses, then presses Enter (long text is otherwise taken as a paste). */
  type(text: string): Promise<void>;
  resize(cols: number, rows: number): void;
  readonly pid: number;
  /** Resolves with agentbox's exit code. */
  readonly exited: Promise<number>;
  kill(): void;
}

export function startPty(
  args: string[],
  options: { cwd: string; env: Record<string, string>; cols?: number; rows?: number; bin?: string },
): PtySession {
  const term = pty.spawn(process.execPath, [options.bin ?? AGENTBOX_BIN, ...args], {
    cwd: options.cwd,
    // A person's terminal would start a resident agentbox as a command exits (docs/resident.md): a
    // test that wants one says so.
    env: { AGENTBOX_RESIDENT: 'manual', ...options.env },
    cols: options.cols ?? 100,
    rows: options.rows ?? 30,
    // node-pty sets TERM to `name`: a test that names a terminal (TERM=xterm-kitty) gets it.
    name: options.env.TERM ?? 'xterm-256color',
  });
  let out = '';
  term.onData((d) => {
    out += d;
  });
  const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  return {
    output: () => out,
    write: (data) => term.write(data),
    async type(text) {
      term.write(text);
      await sleep(100);
      term.write('\r');
    },
    resize: (cols, rows) => term.resize(cols, rows),
    pid: term.pid,
    exited,
    kill: () => {
      try {
        term.kill('SIGKILL');
      } catch {
        // Gone.
      }
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is truthy; throws `what` (with `context()`) after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  options: { timeoutMs?: number; context?: () => string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for: ${what}${options.context ? `\n${options.context()}` : ''}`);
    }
    await sleep(100);
  }
}

/**
 * A stand-in `claude` for what the real one cannot be made to do on cue (always crash, exit
 * cleanly at once, report its window size): a Node script with `body` as its code.
 */
export function fakeClaude(body: string): { bin: string; dir: string; cleanup(): void } {
  const dir = tempDir('agentbox-fake-claude-');
  const bin = path.join(dir, 'claude');
  fs.writeFileSync(bin, `#!/usr/bin/env node\n${body}\n`, { mode: 0o755 });
  return { bin, dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
