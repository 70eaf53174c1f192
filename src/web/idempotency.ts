import type http from 'node:http';
import type { Ledger } from '../ledger/index.js';
import { HttpError } from './http.js';

/** How long a key is remembered, and how many at most (the oldest goes first). */
export const KEY_TTL_MS = 10 * 60_000;
export const KEY_MAX = 256;

/** Printable ASCII without spaces, as a UUID or any client's token; long enough for both. */
const KEY_SHAPE = /^[\x21-\x7e]{1,200}$/;

/** The request's `Idempotency-Key`, or null without one; 400 when it is there but not a key. */
export function idempotencyKey(headers: http.IncomingHttpHeaders): string | null {
  const raw = headers['idempotency-key'];
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !KEY_SHAPE.test(raw)) {
    throw new HttpError(
      400,
      `Idempotency-Key must be 1 to 200 printable ASCII characters without spaces (a UUID), not ${JSON.stringify(raw)}`,
    );
  }
  return raw;
}

interface Entry {
  readonly request: string;
  readonly answer: Promise<unknown>;
  readonly at: number;
}

/**
 * What `POST /api/runs` answered per key, for a while and bounded: a repeat of the same request
 * (a double click, a retry after a lost answer) gets the first one's answer, even while it is
 * still being made; another request under a used key is refused (422), never answered with a run
 * it did not ask for. A start that failed is forgotten, so a corrected form can be sent again.
 */
export class KeyMemory {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = KEY_TTL_MS,
    private readonly max = KEY_MAX,
  ) {}

  async once<T>(
    key: string,
    request: string,
    now: number,
    make: () => Promise<T>,
  ): Promise<{ value: T; repeated: boolean }> {
    this.forgetOld(now);
    const seen = this.entries.get(key);
    if (seen) {
      if (seen.request !== request)
        throw new HttpError(
          422,
          `Idempotency-Key ${JSON.stringify(key)} was used for another request: send a new key for a new run`,
        );
      return { value: (await seen.answer) as T, repeated: true };
    }
    const answer = make();
    this.entries.set(key, { request, answer, at: now });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    try {
      return { value: await answer, repeated: false };
    } catch (error) {
      if (this.entries.get(key)?.answer === answer) this.entries.delete(key);
      throw error;
    }
  }

  private forgetOld(now: number): void {
    // Oldest first (insertion order): stop at the first one still fresh.
    for (const [key, entry] of this.entries) {
      if (now - entry.at < this.ttlMs) break;
      this.entries.delete(key);
    }
  }
}

/** One memory per server: the server opens its ledger once and routes every request with it. */
const memories = new WeakMap<Ledger, KeyMemory>();

export function keyMemory(ledger: Ledger): KeyMemory {
  let memory = memories.get(ledger);
  if (!memory) {
    memory = new KeyMemory();
    memories.set(ledger, memory);
  }
  return memory;
}

/** The request a key stands for, independent of its fields' order. */
export function requestFingerprint(body: Record<string, unknown>): string {
  return JSON.stringify(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
}
