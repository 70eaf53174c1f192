/*
 * The one standby a resident agentbox keeps (src/run/standby/park.ts): held until a revision takes
 * it, until it is no longer wanted (its run left REVIEW, its claude ended), or until it has waited
 * STANDBY_MS; then it is let go (its claude stopped, its harness released). One at a time: a new
 * one lets the last go. Nothing here knows what a standby is made of.
 */

/** How long a standby waits for its revision before it is let go. */
export const STANDBY_MS = 10 * 60_000;
/** How often a waiting standby checks that it is still wanted. */
const CHECK_MS = 5_000;

export interface Held {
  /** The run it is for: the repository's root and the run's name. */
  readonly root: string;
  readonly run: string;
  /** Why it can no longer serve (its run left REVIEW, its claude ended); null while it can. */
  unwanted(): string | null;
  /** Stops its claude and releases what it holds; `why` is logged. */
  letGo(why: string): Promise<void>;
}

let held: { readonly standby: Held; readonly timers: NodeJS.Timeout[] } | null = null;

/** Keeps `standby`, letting go of the one kept before (`waitMs`, `checkMs`: for tests). */
export async function keep(
  standby: Held,
  { waitMs = STANDBY_MS, checkMs = CHECK_MS }: { waitMs?: number; checkMs?: number } = {},
): Promise<void> {
  await letGoOfStandby('another run’s standby took its place');
  const unused = `unused for ${waitMs >= 60_000 ? `${Math.round(waitMs / 60_000)} min` : `${waitMs} ms`}`;
  const expire = setTimeout(() => void letGoIf(standby, unused), waitMs);
  const check = setInterval(() => {
    const why = standby.unwanted();
    if (why) void letGoIf(standby, why);
  }, checkMs);
  for (const timer of [expire, check]) timer.unref();
  held = { standby, timers: [expire, check] };
}

/** The standby for run `run` of repository `root`, taken out of the store; null when there is none. */
export function take(root: string, run: string): Held | null {
  if (!held || held.standby.root !== root || held.standby.run !== run) return null;
  const { standby } = held;
  release();
  return standby;
}

/** Lets go of the standby kept, if any (the resident agentbox stopping). */
export async function letGoOfStandby(why: string): Promise<void> {
  if (!held) return;
  const { standby } = held;
  release();
  await standby.letGo(why);
}

async function letGoIf(standby: Held, why: string): Promise<void> {
  if (held?.standby === standby) await letGoOfStandby(why);
}

function release(): void {
  for (const timer of held?.timers ?? []) clearTimeout(timer);
  held = null;
}
