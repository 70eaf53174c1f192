import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { runIdOf } from '../ledger/names.js';
import { openLedger } from '../ledger/paths.js';
import { type FetchResult, fetchRuns } from '../remote/fetch.js';
import type { PatchChange } from '../remote/import.js';
import { checkRemoteName, DEFAULT_REMOTE } from '../remote/refs.js';
import { terminalJson } from '../util/json-out.js';
import { terminalLine } from '../util/terminal-text.js';

/** `agentbox fetch [<remote>]`: brings every run published to the remote into this ledger. */
export async function fetchRemote(
  ctx: CommandContext,
  remote: string | undefined,
  options: { json?: boolean },
): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const result = await fetchRuns(ledger, checkRemoteName(remote ?? DEFAULT_REMOTE), ctx.env);
  // Every refusal is reported, on stderr so that --json stays one document; the name and the reason
  // quote the remote's publication, which a stranger may have written.
  for (const s of result.groups.skipped)
    ctx.io.err(
      `agentbox: group not imported: ${terminalJson(s.group)}: ${terminalLine(s.why)} (logged in .agents/remotes/events.jsonl)\n`,
    );
  for (const s of result.skipped)
    ctx.io.err(`agentbox: not imported: ${terminalJson(s.run)}: ${terminalLine(s.why)}\n`);
  if (options.json) ctx.io.out(`${terminalJson(result)}\n`);
  else ctx.io.out(renderFetch(result));
  return 0;
}

/** The summary `agentbox fetch` prints. Pure. */
export function renderFetch(r: FetchResult): string {
  const lines = [
    `${r.remote}: ${r.published} published run(s) — ${r.imported.length} new, ${r.updated.length} updated` +
      `${r.kept.length ? `, ${r.kept.length} already decided here` : ''}` +
      `${r.own ? `, ${r.own} from this clone` : ''}${r.skipped.length ? `, ${r.skipped.length} not imported` : ''}` +
      `${r.refused_before ? `, ${r.refused_before} refused before and unchanged` : ''}`,
    ...r.imported.slice(0, 20).map((name) => `  new      ${terminalLine(name)}`),
    // A replaced patch is never cut from the list: it undid a review.
    ...r.changed.map(changedLine),
    ...r.updated
      .filter((name) => !r.changed.some((c) => c.run === name))
      .slice(0, 20)
      .map((name) => `  updated  ${terminalLine(name)}`),
  ];
  const unchanged = r.updated.length - r.changed.length;
  const more = r.imported.length + unchanged - Math.min(r.imported.length, 20) - Math.min(unchanged, 20);
  if (more > 0) lines.push(`  … ${more} more (agentbox status --all)`);
  lines.push(...renderGroups(r));
  if (r.changed.length > 0)
    lines.push(
      `  a changed patch is unreviewed: see it before you merge it: agentbox diff ${runIdOf(r.changed[0]!.run)}${r.changed.length > 1 ? ' (each of them)' : ''}`,
    );
  if (r.imported.length + r.updated.length > 0)
    lines.push('  next: agentbox status, agentbox show <id>, agentbox diff <id>');
  return `${lines.join('\n')}\n`;
}

/** `changed  <run>: patch a1b2c3d4e5f6 → c3d4e5f6a7b8, marked unreviewed`. Pure. */
export function changedLine(c: PatchChange): string {
  const short = (sha: string | null) => (sha === null ? 'none' : sha.slice(0, 12));
  return `  changed  ${terminalLine(c.run)}: patch ${short(c.from)} → ${short(c.to)}, marked unreviewed`;
}

/** The groups' lines of the summary: none when the remote publishes no group. Pure. */
function renderGroups(r: FetchResult): string[] {
  const g = r.groups;
  if (g.published === 0) return [];
  return [
    `${r.remote}: ${g.published} published group(s) — ${g.imported.length} new, ${g.updated.length} updated` +
      `${g.kept.length ? `, ${g.kept.length} already decided here` : ''}` +
      `${g.own ? `, ${g.own} from this clone` : ''}${g.skipped.length ? `, ${g.skipped.length} not imported` : ''}` +
      `${g.refused_before ? `, ${g.refused_before} refused before and unchanged` : ''}`,
    ...g.imported.slice(0, 20).map((name) => `  new      ${terminalLine(name)} (group)`),
    ...g.updated.slice(0, 20).map((name) => `  updated  ${terminalLine(name)} (group)`),
  ];
}
