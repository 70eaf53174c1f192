import { STAMP_LENGTH } from './names.js';

/** What the listing order reads of a run (a RunSummary, or a run folded from INDEX.jsonl). */
export interface Ordered {
  readonly name: string;
  readonly started_at: string | null;
}

/** Newest first: by start minute (the name), then start time inside the minute, then name. */
export function compareRuns(a: Ordered, b: Ordered): number {
  // NOTE: no slicing (sorting 10,000 runs calls this ~140,000 times). The stamp is a fixed-length
  // prefix, so when stamps differ the whole names order the same way.
  if (!sameStamp(a.name, b.name)) return a.name < b.name ? 1 : -1;
  const ta = a.started_at ?? '';
  const tb = b.started_at ?? '';
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/** Compared from the end: neighbouring runs differ in the minute first. */
export function sameStamp(a: string, b: string): boolean {
  for (let i = STAMP_LENGTH - 1; i >= 0; i--) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/**
 * `runs`, in name order (newest minute first), sorted by compareRuns: only runs sharing a minute
 * can be out of order, so only those are sorted (a whole sort of 10,000 runs costs ~8 ms). A
 * minute of a few runs by insertion; a crowded one (a burst of CI runs) by the built-in sort.
 */
export function sortInsideMinutes<T extends Ordered>(runs: T[]): T[] {
  for (let start = 0, end = 1; start < runs.length; start = end, end = start + 1) {
    while (end < runs.length && sameStamp(runs[start]!.name, runs[end]!.name)) end++;
    if (end - start > 8) {
      runs.splice(start, end - start, ...runs.slice(start, end).sort(compareRuns));
      continue;
    }
    for (let i = start + 1; i < end; i++) {
      const run = runs[i]!;
      let j = i;
      for (; j > start && compareRuns(runs[j - 1]!, run) > 0; j--) runs[j] = runs[j - 1]!;
      runs[j] = run;
    }
  }
  return runs;
}

/** `runs` in listing order: as they are when they already are (the usual case), else sorted. */
export function inListingOrder<T extends Ordered>(runs: T[]): T[] {
  for (let i = 1; i < runs.length; i++)
    if (compareRuns(runs[i - 1]!, runs[i]!) > 0) return runs.sort(compareRuns);
  return runs;
}
