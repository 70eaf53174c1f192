import { describe, expect, it } from 'vitest';
import { afterReply, onBehalfOf, ownerEnv, ownerPid } from '../../src/process/owner.js';

/** Work that ends when told to: whether a caller waited for it shows in `done`. */
function work() {
  let finish!: () => void;
  const state = { done: false };
  const promise = new Promise<void>((resolve) => {
    finish = resolve;
  }).then(() => {
    state.done = true;
  });
  return { promise, finish, state };
}

describe('the process a command runs for (src/process/owner.ts)', () => {
  it('is this process, and work after the reply is awaited before the command ends', async () => {
    expect(ownerPid()).toBe(process.pid);
    expect(ownerEnv()).toBe(process.env);
    const w = work();
    setTimeout(w.finish, 20);
    await afterReply(() => w.promise);
    expect(w.state.done).toBe(true);
  });

  it('served for another process: its pid and environment, and work after the reply handed over', async () => {
    const handed: (() => Promise<unknown>)[] = [];
    const w = work();
    let started = false;
    const seen = await onBehalfOf(
      4242,
      { ONLY: 'this' },
      async () => {
        await Promise.resolve();
        await afterReply(() => {
          started = true;
          return w.promise;
        });
        return { pid: ownerPid(), env: ownerEnv(), started };
      },
      (p) => handed.push(p),
    );
    // Not even begun before the command returned: the one who served it does it after the reply.
    expect(seen).toEqual({ pid: 4242, env: { ONLY: 'this' }, started: false });
    expect(handed).toHaveLength(1);
    w.finish();
    await handed[0]!();
    expect(started).toBe(true);
    expect(w.state.done).toBe(true);
  });
});
