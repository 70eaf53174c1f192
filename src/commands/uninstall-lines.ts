import type { PurgeItem } from '../gate/purge.js';
import { runIdOf } from '../ledger/names.js';

/* What `uninstall` says of the items `--purge` removes (src/gate/purge.ts), pure. */

export function countItems(items: readonly PurgeItem[]): string {
  const n = (what: PurgeItem['what']) => items.filter((i) => i.what === what).length;
  const parts = [`${n('worktree')} worktree(s)`, `${n('branch')} branch(es)`, `${n('ref')} ref(s)`];
  if (n('tracking') > 0) parts.push(`${n('tracking')} remote-tracking ref(s)`);
  if (n('commands') > 0) parts.push(`${n('commands')} run command folder(s)`);
  return parts.join(', ');
}

export function progressLabel(item: PurgeItem): string {
  if (item.what === 'worktree') return `worktree ${item.run ? runIdOf(item.run) : item.path}`;
  return `${item.what} ${item.path}`;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function describe(item: PurgeItem, rel: (p: string) => string): string {
  const run = item.run && item.what === 'worktree' ? ` (${runIdOf(item.run)})` : '';
  return `${item.what.padEnd(9)}${rel(item.path)}${run}`;
}
