import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { entryLine, type TrustEntry, type TrustStatus, trustStatus, wasTrusted } from '../trust/index.js';
import { writeRecord } from '../trust/store.js';
import { terminalJson } from '../util/json-out.js';

export interface TrustOptions {
  /** Trust without asking (scripts, CI): the entries are still printed. */
  readonly yes?: boolean;
  readonly json?: boolean;
  /** Take the trust back: the repository's entries are not used again until trusted anew. */
  readonly revoke?: boolean;
}

function asJson(status: TrustStatus): string {
  return `${terminalJson(
    {
      root: status.root,
      state: status.state,
      trusted: status.trusted,
      hash: status.hash,
      entries: status.entries,
      store_file: status.storeFile,
      ...(status.storeProblem ? { store_problem: status.storeProblem } : {}),
    },
    2,
  )}\n`;
}

const lines = (entries: readonly TrustEntry[]) => entries.map((e) => `${entryLine(e, true)}\n`).join('');

/** The entries; after a change, what is new or different first, then what is as the person trusted it. */
function listing(status: TrustStatus): string {
  if (status.state !== 'changed') return lines(status.entries);
  const fresh = status.entries.filter((e) => !wasTrusted(e, status.trustedEntries));
  const kept = status.entries.filter((e) => wasTrusted(e, status.trustedEntries));
  return [
    `new or changed since you trusted it:\n${lines(fresh)}`,
    kept.length > 0 ? `as you trusted it:\n${lines(kept)}` : '',
  ].join('');
}

async function confirmed(ctx: CommandContext, status: TrustStatus, yes: boolean): Promise<boolean> {
  if (yes) return true;
  if (!ctx.io.ask) {
    throw new AgentboxError(
      'TRUST_REQUIRED',
      `nobody to ask whether to trust ${status.root} (stdin is not a terminal)`,
      {
        hint: 'read the entries above, then run "agentbox trust --yes" to trust them',
      },
    );
  }
  const answer = await ctx.io.ask(`Trust these ${status.entries.length} entries of ${status.root}? [y/N] `);
  return /^y(es)?$/i.test(answer.trim());
}

/**
 * `agentbox trust`: shows what the repository carries that runs commands, weakens the box or
 * loosens the person's own settings (config/rules.ts), asks,
 * and records the repository and a hash of those entries in the person's own state (src/trust/).
 */
export async function trust(ctx: CommandContext, options: TrustOptions = {}): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const status = trustStatus(repo.root, ctx.env);
  if (options.json) {
    ctx.io.out(asJson(status));
    return 0;
  }
  if (status.storeProblem) ctx.io.err(`agentbox: ${status.storeProblem}; it will be replaced\n`);
  if (options.revoke) {
    writeRecord(ctx.env, status.root, null);
    ctx.io.out(`${status.root}: trust revoked; its entries are not used until "agentbox trust" again\n`);
    return 0;
  }
  if (status.state === 'nothing') {
    ctx.io.out(`${status.root} carries nothing that needs trust\n`);
    return 0;
  }
  if (status.state === 'trusted') {
    ctx.io.out(`${status.root} is trusted with these entries:\n${listing(status)}`);
    return 0;
  }
  const changed = status.state === 'changed' ? ' (changed since you trusted it)' : '';
  ctx.io.out(
    `${status.root} carries what would run as you, weaken the box or loosen your limits${changed}:\n${listing(status)}`,
  );
  if (!(await confirmed(ctx, status, options.yes === true))) {
    ctx.io.out('not trusted; nothing recorded\n');
    return 1;
  }
  const file = writeRecord(ctx.env, status.root, {
    hash: status.hash,
    trusted_at: new Date().toISOString(),
    entries: status.entries,
  });
  ctx.io.out(
    `trusted ${status.root} (${status.entries.length} entries), recorded in ${file}; a change to any of them asks again\n`,
  );
  return 0;
}
