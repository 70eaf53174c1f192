import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { type Ledger, openLedger } from '../ledger/paths.js';
import { pointedGroup } from './pointed.js';
import { findGroup } from './resolve.js';

/**
 * The group a command's `<run>` names, or null when it names none (the command then takes it as a
 * run). Every command that takes a run asks this first (src/group/resolve.ts says what names a group;
 * `latest` landing on an attempt names its group: src/group/pointed.ts).
 */
export async function groupOf(
  ctx: CommandContext,
  ref: string,
): Promise<{ ledger: Ledger; name: string } | null> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const name = findGroup(ledger, ref) ?? pointedGroup(ledger, ref);
  return name ? { ledger, name } : null;
}
