import { spawn } from 'node:child_process';
import type { Env } from '../util/env.js';
import { own, runGit } from './exec.js';

/*
 * The person's pager, as git would start it for `git diff`: `agentbox diff` and `agentbox show
 * --transcript` on a terminal page as git does. It is given text agentbox has made safe for the
 * terminal (src/review/diff-text.ts, src/transcript/render.ts), never an agent's raw bytes: a
 * pager that passes bytes through (`cat`, `less -R`, `bat`, `delta`) then has nothing to pass but
 * text and colours.
 */

/** Where lines go: written in order; a false return from write means the reader went away. */
export interface LineSink {
  write(text: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The pager git would start in this repository on a terminal (GIT_PAGER, core.pager, PAGER, else
 * its default), asked of git itself; null when that is none (`cat`, empty, or git could not say).
 */
export async function gitPager(root: string, env: Env): Promise<string | null> {
  const answer = await runGit(['var', 'GIT_PAGER'], { cwd: root, env, personPager: true });
  const pager = answer.exitCode === 0 ? answer.stdout.trim() : '';
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
  own(child);
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
