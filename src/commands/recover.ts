import { type CommandContext, memoryIo } from '../context.js';
import { assertHuman } from '../gate/gate.js';
import { readRun } from '../ledger/index.js';
import type { RecoveryAction } from '../recover/decide.js';
import { carryOut, decideRecoveries } from '../recover/recover.js';
import { loadRunContext } from '../run/begin/context.js';
import { terminalLine, terminalText } from '../util/terminal-text.js';

export interface RecoverOptions {
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly force?: boolean;
}

const LABEL: Record<RecoveryAction['kind'], string> = {
  none: 'nothing to do',
  keep_waiting: 'keeps waiting',
  resume: 'resume',
  rollback_replay: 'roll back and replay',
  give_up: 'left as it is',
};

/**
 * `agentbox recover [<run>]`: after agentbox or the machine went down, decides for every run that
 * was running (or the one named) whether to resume it, roll it back and replay it, or leave it
 * waiting for you, records each decision, and carries them out one after another.
 */
export async function recover(
  ctx: CommandContext,
  ref: string | undefined,
  options: RecoverOptions,
): Promise<number> {
  assertHuman(ctx.env, 'recover', ctx.cwd);
  const rc = await loadRunContext(ctx);
  const dry = options.dryRun === true;
  const decided = await decideRecoveries(ctx, rc, ref, !dry);
  const results: { run: string; action: string; reason: string; status?: string }[] = [];
  let code = 0;
  for (const { name, action } of decided) {
    const line = `${name}: ${LABEL[action.kind]} — ${terminalLine(action.reason)}`;
    if (!options.json) ctx.io.out(`${line}\n`);
    const result: (typeof results)[number] = { run: name, action: action.kind, reason: action.reason };
    if (!dry && (action.kind === 'resume' || action.kind === 'rollback_replay')) {
      // In --json mode each run's own output is collected, and one document is printed at the end.
      const runCtx = options.json ? { ...ctx, io: memoryIo() } : ctx;
      try {
        const exit = await carryOut(runCtx, rc, name, action, {
          json: false,
          force: options.force === true,
        });
        if (exit !== 0) code = 1;
      } catch (error) {
        code = 1;
        const message = error instanceof Error ? error.message : String(error);
        if (!options.json) ctx.io.err(`agentbox: recovering ${name} failed: ${terminalText(message)}\n`);
        result.reason = `${action.reason} (failed: ${message})`;
      }
      result.status = readRun(rc.ledger, name).state?.status;
    }
    results.push(result);
  }
  if (options.json) ctx.io.out(`${JSON.stringify({ dry_run: dry, runs: results }, null, 2)}\n`);
  else if (decided.length === 0) ctx.io.out('no runs to recover\n');
  else if (dry) ctx.io.out('dry run: nothing was changed\n');
  return code;
}
