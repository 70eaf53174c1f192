import { createHash } from 'node:crypto';
import type { TrustEntry } from './entries.js';

/** A record of the person's trust in one repository (src/trust/store.ts). */
export interface TrustRecord {
  readonly hash: string;
  readonly trusted_at: string;
}

/**
 * nothing: the repository carries nothing that needs trust. trusted: the person trusted exactly
 * these entries. untrusted: never trusted. changed: trusted once, but the entries differ since.
 */
export type TrustState = 'nothing' | 'trusted' | 'untrusted' | 'changed';

/** The entries' fingerprint: any change of a file name, key or text changes it. Pure. */
export function hashEntries(entries: readonly TrustEntry[]): string {
  const canonical = JSON.stringify(entries.map((e) => [e.file, e.key, e.text]));
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

/** Whether the entries may take effect. Pure. */
export function decideTrust(entries: readonly TrustEntry[], record: TrustRecord | undefined): TrustState {
  if (entries.length === 0) return 'nothing';
  if (!record) return 'untrusted';
  return record.hash === hashEntries(entries) ? 'trusted' : 'changed';
}

/** The entries may take effect (nothing to trust, or trusted as they are). */
export const isTrusted = (state: TrustState): boolean => state === 'nothing' || state === 'trusted';
