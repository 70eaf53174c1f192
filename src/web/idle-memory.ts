import v8 from 'node:v8';

/*
 * NOTE: why a long-lived server asks V8 for a GC at all. A request that reads every run (a filtered
 * page of the runs list, the recovery check over thousands of interrupted runs) keeps a few MB of
 * objects alive while it works; V8 counts what survives its young-generation GCs and, past its
 * capacity, doubles the young generation, up to 2 × 16 MB. It shrinks it again only in a GC that
 * finds allocation slow, and an idle server allocates nothing, so no GC comes: measured with
 * 10,000 runs, the live heap after a full GC is ~12 MB while the process keeps 110–125 MB resident
 * for as long as it runs (V8's own memory reducer starts only after a full GC, and sometimes never).
 * Reading less postpones the growth but cannot prevent it: the count is cumulative over the
 * server's life. So, once the server has been quiet for a while after work that grew the heap, one
 * low-memory GC: V8's full collection that also shrinks the young generation and frees unused
 * pages (measured: 125 → 67 MB RSS, one pause of 50–370 ms on an idle server).
 */

const MB = 1024 * 1024;

/** The heap V8 holds from the system (committed), in bytes. */
function heapSize(): number {
  return v8.getHeapStatistics().total_heap_size;
}

/**
 * The inspector's HeapProfiler.collectGarbage, in-process (no port is opened, nothing can connect):
 * the one public way, without `--expose-gc`, to ask V8 for its low-memory GC. A Node built without
 * the inspector has none: nothing is released, and nothing breaks.
 */
async function lowMemoryGc(): Promise<void> {
  let inspector: typeof import('node:inspector');
  try {
    inspector = await import('node:inspector');
  } catch {
    return;
  }
  const session = new inspector.Session();
  session.connect();
  try {
    await new Promise<void>((resolve) => session.post('HeapProfiler.collectGarbage', () => resolve()));
  } finally {
    session.disconnect();
  }
}

export interface IdleReleaseOptions {
  /** How long without work before memory is given back. */
  readonly idleMs?: number;
  /** How much the heap must have grown since the last release (or the start) to be worth one. */
  readonly growthBytes?: number;
}

/**
 * Gives a server's grown heap back to the system after a quiet spell (see the note above): `busy()`
 * on every request (and after work done outside one) restarts the wait; when it ends, and only if
 * the heap grew by `growthBytes` since the last release, one low-memory GC. A server under steady
 * use never waits that long and pays nothing; an idle one pays once per burst.
 */
export class IdleRelease {
  private timer: NodeJS.Timeout | undefined;
  private floor = heapSize();
  private closed = false;
  /** How many times memory was given back (for tests and the bench). */
  released = 0;

  constructor(private readonly options: IdleReleaseOptions = {}) {}

  busy(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.release(), this.options.idleMs ?? 5000);
    // A quiet spell never keeps the process alive.
    this.timer.unref();
  }

  /** A request: busy now, and again when its answer has gone out. */
  during(res: { once(event: 'finish', listener: () => void): unknown }): void {
    this.busy();
    res.once('finish', () => this.busy());
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async release(): Promise<void> {
    this.timer = undefined;
    if (heapSize() < this.floor + (this.options.growthBytes ?? 8 * MB)) return;
    await lowMemoryGc();
    this.released++;
    this.floor = heapSize();
  }
}
