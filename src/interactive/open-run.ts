import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { headSha } from '../git/worktree.js';
import { createRun, reactivated, readRun, resolveRun, updateState } from '../ledger/index.js';
import { composeRunPrompt, runTemplates, templateValues, writeRunPrompt } from '../run/begin/compose.js';
import type { RunContext } from '../run/begin/context.js';
import { buildEnvelope, withTemplates } from '../run/begin/tier.js';
import type { SupervisorMode } from '../supervisor/rules.js';
import { clearStaleSocket } from './ipc.js';
import { recordedSocket } from './socket-path.js';

/** The session's run, as opened: new, or taken up again with `--resume`. */
export interface OpenedRun {
  readonly name: string;
  readonly resumeSessionId: string | null;
  /** What claude gets as its first message: the task, composed with the templates. */
  readonly firstMessage: string | undefined;
}

/** `--resume`: an interactive run's session, once it is known not to be running still. */
export async function reopenRun(rc: RunContext, ref: string): Promise<OpenedRun> {
  const name = resolveRun(rc.ledger, ref);
  const details = readRun(rc.ledger, name);
  if (details.meta.type !== 'interactive') {
    throw new AgentboxError('USAGE', `run ${name} is a ${details.meta.type} run`, {
      hint: `continue it with agentbox resume ${details.meta.run_id}`,
    });
  }
  const resumeSessionId = details.state?.session_id ?? null;
  if (!resumeSessionId) throw new AgentboxError('USAGE', `run ${name} has no session to resume`);
  // A live socket means the session is still running: refuse before touching its state.
  const socket = recordedSocket(details.dir, details.meta.run_id, details.state?.socket_path);
  if (socket) await clearStaleSocket(socket);
  await updateState(rc.ledger, name, reactivated(), { event: 'resume' });
  return { name, resumeSessionId, firstMessage: undefined };
}

/**
 * A new interactive run. A first task is composed with the templates (interactive.input.md, else
 * input.md), read and checked before the run exists; without one there is nothing to send.
 */
export async function createSessionRun(
  ctx: CommandContext,
  rc: RunContext,
  task: string | undefined,
  mode: SupervisorMode,
): Promise<OpenedRun> {
  const templates = task ? runTemplates(ctx.env, rc.repo.root, 'interactive', rc.config) : null;
  const run = await createRun(rc.ledger, {
    type: 'interactive',
    task: task ?? '(interactive session)',
    repoShaStart: await headSha(rc.repo.root),
    pid: process.pid,
    options: { supervisor: mode, max_iterations: rc.config.supervisor.max_iterations },
    envelope: (r) => {
      const envelope = buildEnvelope({
        type: 'interactive',
        runId: r.id,
        model: rc.config.claude.model,
        worktree: null,
        fixAllowed: [],
      });
      return templates ? withTemplates(envelope, templates) : envelope;
    },
  });
  if (!templates || !task) return { name: run.name, resumeSessionId: null, firstMessage: task };
  // No output contract in a person's own session: only the input templates.
  const input = { ...templates, output: null };
  const composed = composeRunPrompt(input, templateValues({ meta: run.meta, worktree: null, branch: null }));
  await writeRunPrompt(run.dir, composed, input);
  return { name: run.name, resumeSessionId: null, firstMessage: composed.composed };
}
