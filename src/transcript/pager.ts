import { execFile, spawn } from 'node:child_process';
import type { Env } from '../util/env.js';

/** Where lines go: written in order; a false return from write means the reader went away. */
export interface LineSink {
  write(text: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The pager git would use for this repository (GIT_PAGER, core.pager, PAGER, less), the way `git
 * diff` pages: `agentbox show --transcript` in a terminal reads like `agentbox diff`. null: none
 * (`cat`, or git could not say).
 */
export async function gitPager(root: string, env: Env): Promise<string | null> {
  // NOTE: not through src/git/exec.ts: its inert git names no pager. This is the person's own git
  // in their own repository, as `agentbox diff` runs it to page (src/review/diff.ts).
  const pager = await new Promise<string>((resolve) => {
    execFile(
      'git',
      ['var', 'GIT_PAGER'],
      { cwd: root, env: env as NodeJS.ProcessEnv, timeout: 10_000 },
      (error, stdout) => resolve(error ? '' : stdout.trim()),
    );
  });
  return pager === '' || pager === 'cat' ? null : pager;
}

/**
 * A pager fed line by line, with backpressure: nothing piles up in memory while the person reads.
 * NOTE: the pager is a shell command line by nature (core.pager is one, and git runs it with sh
 * the same way); it is the person's own setting, never the agent's.
 */
export function pagerSink(pager: string, env: Env): LineSink {
  const child = spawn('sh', ['-c', pager], {
    stdio: ['pipe', 'inherit', 'inherit'],
    // git's defaults for less and lv: quit if one screen, keep colours, do not clear the screen.
    env: { ...env, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' } as NodeJS.ProcessEnv,
  });
  let gone = false;
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('error', () => {
    gone = true;
  });
  child.stdin.on('error', () => {
    // The person quit the pager before the end (EPIPE): nothing more to show.
    gone = true;
  });
  child.once('close', () => {
    gone = true;
  });
  return {
    async write(text) {
      if (gone) return false;
      if (!child.stdin.write(text))
        await new Promise<void>((resolve) => {
          const done = () => {
            child.stdin.off('drain', done);
            child.off('close', done);
            resolve();
          };
          child.stdin.on('drain', done);
          child.once('close', done);
        });
      return !gone;
    },
    async close() {
      if (!gone) child.stdin.end();
      await closed;
    },
  };
}
