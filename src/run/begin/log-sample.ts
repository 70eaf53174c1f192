/**
 * Which of many like refusals a run writes to its events.jsonl. Every refusal is logged, but an
 * agent that loops (a retry, a flood through the sandbox's proxy bridge) must not fill the disk:
 * a key's first `first` are written, then every `every`th with its count; past `thinAfter` in all
 * (every key's), only every `later`th; past `keys` keys, the rest count as one (`overflow`). Each
 * one is counted.
 */
export interface SampleLimits {
  readonly first: number;
  readonly every: number;
  readonly thinAfter: number;
  readonly later: number;
  readonly keys: number;
  /** The key that stands for every key past `keys`. */
  readonly overflow: string;
}

export interface Sampled {
  /** The key counted: the one asked for, or `overflow`. */
  readonly key: string;
  /** This key's count so far, this one included. */
  readonly count: number;
  /** Every key's. */
  readonly total: number;
  /** Whether this one is written. */
  readonly write: boolean;
}

export class LogSample {
  private readonly counts = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: SampleLimits) {}

  take(asked: string): Sampled {
    const { first, every, thinAfter, later, keys, overflow } = this.limits;
    const key = this.counts.has(asked) || this.counts.size < keys ? asked : overflow;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    const total = ++this.total;
    const write = (count <= first || count % every === 0) && (total <= thinAfter || total % later === 0);
    return { key, count, total, write };
  }
}
