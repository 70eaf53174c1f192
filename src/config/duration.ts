/**
 * A heartbeat younger than this is never stale (src/watchdog/watchdog.ts): supervisors write one
 * every 15 s, so `runs.stall_after` below it would mean nothing, and is refused (issue 38).
 */
export const MIN_STALL_MS = 60_000;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "250ms", "30s", "5m", "2h", "30d" into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNITS[match[2]!]!);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? ` ${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${m % 60 ? ` ${m % 60}m` : ''}`;
  return `${Math.floor(h / 24)}d`;
}
