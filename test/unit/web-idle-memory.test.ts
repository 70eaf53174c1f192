import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { IdleRelease } from '../../src/web/idle-memory.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const heap = () => v8.getHeapStatistics().total_heap_size;
/** Until `done()` or 5 s (a loaded machine delays timers and the GC itself). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 20) await sleep(20);
}

/** Keeps ~`mb` MB alive through many young-generation GCs, then lets it all go: V8's heap grows. */
function burst(mb: number): void {
  let kept: string[][] = [];
  for (let i = 0; i < mb * 40; i++) kept.push(Array.from({ length: 512 }, (_, j) => `${i}:${j}`));
  kept = [];
}

/** The UI server's memory release after a quiet spell (src/web/idle-memory.ts), on this process's real V8 heap. */
describe('IdleRelease', () => {
  it('after a burst that grew the heap and a quiet spell, gives the heap back once', async () => {
    const idle = new IdleRelease({ idleMs: 50, growthBytes: 8 * 1024 * 1024 });
    burst(40);
    const grown = heap();
    idle.busy();
    await until(() => idle.released > 0);
    expect(idle.released).toBe(1);
    expect(heap()).toBeLessThan(grown - 8 * 1024 * 1024);
    // Quiet again, but nothing grew since: nothing to give back.
    idle.busy();
    await sleep(200);
    expect(idle.released).toBe(1);
    idle.close();
  });

  it('waits while requests keep coming, and close() cancels the wait', async () => {
    const idle = new IdleRelease({ idleMs: 150, growthBytes: 0 });
    for (let i = 0; i < 8; i++) {
      idle.busy();
      await sleep(40);
    }
    expect(idle.released).toBe(0);
    await until(() => idle.released > 0);
    expect(idle.released).toBe(1);
    idle.busy();
    idle.close();
    await sleep(300);
    expect(idle.released).toBe(1);
  });
});
