import type { CommandContext } from '../context.js';
import { findRepo } from '../git/repo.js';
import { openLedger } from '../ledger/paths.js';
import { type FetchResult, fetchRuns } from '../remote/fetch.js';
import { checkRemoteName, DEFAULT_REMOTE } from '../remote/refs.js';
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
      `agentbox: group not imported: ${terminalLine(JSON.stringify(s.group))}: ${terminalLine(s.why)} (logged in .agents/remotes/events.jsonl)\n`,
    );
  for (const s of result.skipped)
    ctx.io.err(`agentbox: not imported: ${terminalLine(JSON.stringify(s.run))}: ${terminalLine(s.why)}\n`);
  if (options.json) ctx.io.out(`${JSON.stringify(result)}\n`);
  else ctx.io.out(renderFetch(result));
  return 0;
}

/** The summary `agentbox fetch` prints. Pure. */
export function renderFetch(r: FetchResult): string {
  const lines = [
    `${r.remote}: ${r.published} published run(s) — ${r.imported.length} new, ${r.updated.length} updated` +
      `${r.kept.length ? `, ${r.kept.length} already decided here` : ''}` +
      `${r.own ? `, ${r.own} from this clone` : ''}${r.skipped.length ? `, ${r.skipped.length} not imported` : ''}`,
    ...r.imported.slice(0, 20).map((name) => `  new      ${terminalLine(name)}`),
    ...r.updated.slice(0, 20).map((name) => `  updated  ${terminalLine(name)}`),
  ];
  const more =
    r.imported.length + r.updated.length - Math.min(r.imported.length, 20) - Math.min(r.updated.length, 20);
  if (more > 0) lines.push(`  … ${more} more (agentbox status --all)`);
  lines.push(...renderGroups(r));
  if (r.imported.length + r.updated.length > 0)
    lines.push('  next: agentbox status, agentbox show <id>, agentbox diff <id>');
  return `${lines.join('\n')}\n`;
}

/** The groups' lines of the summary: none when the remote publishes no group. Pure. */
function renderGroups(r: FetchResult): string[] {
  const g = r.groups;
  if (g.published === 0) return [];
  return [
    `${r.remote}: ${g.published} published group(s) — ${g.imported.length} new, ${g.updated.length} updated` +
      `${g.kept.length ? `, ${g.kept.length} already decided here` : ''}` +
      `${g.own ? `, ${g.own} from this clone` : ''}${g.skipped.length ? `, ${g.skipped.length} not imported` : ''}`,
    ...g.imported.slice(0, 20).map((name) => `  new      ${terminalLine(name)} (group)`),
    ...g.updated.slice(0, 20).map((name) => `  updated  ${terminalLine(name)} (group)`),
  ];
}
