import { createHash } from 'node:crypto';
import type { TrustEntry } from './entries.js';

/** A record of the person's trust in one repository (src/trust/store.ts). */
export interface TrustRecord {
  readonly hash: string;
  readonly trusted_at: string;
  /** The entries trusted (absent from records of old versions: then only the hash counts). */
  readonly entries?: readonly TrustEntry[];
}

/**
 * nothing: the repository carries nothing that needs trust. trusted: the person trusted each of
 * these entries as it is. untrusted: never trusted. changed: trusted once, but an entry is new or
 * different since.
 */
export type TrustState = 'nothing' | 'trusted' | 'untrusted' | 'changed';

/** The entries' fingerprint: any change of a file name, key or text changes it. Pure. */
export function hashEntries(entries: readonly TrustEntry[]): string {
  const canonical = JSON.stringify(entries.map((e) => [e.file, e.key, e.text]));
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

const sameEntry = (a: TrustEntry, b: TrustEntry) => a.file === b.file && a.key === b.key && a.text === b.text;

/** Whether `entry` is one of `trusted`, as it was trusted. Pure. */
export const wasTrusted = (entry: TrustEntry, trusted: readonly TrustEntry[] | undefined): boolean =>
  trusted?.some((t) => sameEntry(t, entry)) === true;

/**
 * Whether the entries may take effect. Fewer of what was trusted is still trusted: an entry can
 * drop out without the repository changing (the person raised their own limit past the
 * repository's), and what is left is each as the person saw it. Pure.
 */
export function decideTrust(entries: readonly TrustEntry[], record: TrustRecord | undefined): TrustState {
  if (entries.length === 0) return 'nothing';
  if (!record) return 'untrusted';
  if (record.hash === hashEntries(entries)) return 'trusted';
  return entries.every((e) => wasTrusted(e, record.entries)) ? 'trusted' : 'changed';
}

/** The entries may take effect (nothing to trust, or trusted as they are). */
export const isTrusted = (state: TrustState): boolean => state === 'nothing' || state === 'trusted';
