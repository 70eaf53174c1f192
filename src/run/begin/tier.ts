import type { Envelope, RunType } from '../../ledger/types.js';
import { commandNames, skillRules } from '../../slash/index.js';
import { type RunTemplates, templateRecord } from '../../templates/load.js';

/** Run types a user starts from the command line (interactive sessions have their own command). */
export const HEADLESS_TYPES = ['scout', 'plan', 'fix', 'review'] as const;
export type HeadlessType = (typeof HEADLESS_TYPES)[number];

export interface TierInput {
  readonly type: RunType;
  readonly runId: string;
  readonly model: string | null;
  /** The fix run's worktree (absolute, canonical); null for read-only runs. */
  readonly worktree: string | null;
  /** `runs.fix_allowed_tools`: what a fix run may do without asking besides editing its worktree. */
  readonly fixAllowed: readonly string[];
}

const READ_TOOLS = ['Read', 'Grep', 'Glob', 'Bash', 'Skill'];
const EDIT_TOOLS = ['Edit', 'Write'];

/** Types whose agent changes code (in a worktree); the others are read-only. */
export const needsWorktree = (type: RunType): boolean => type === 'fix';

/**
 * The permission tier of a run type, as the envelope meta.yaml records and config_hash covers.
 * Read-only runs are offered no edit tool at all and pre-approve nothing but their own safe
 * commands: Claude Code allows read-only use inside the project by itself, and a pre-approved
 * `Read` would reach outside it. A fix run is offered edits and pre-approves them only inside its
 * worktree.
 * NOTE: without the Skill rules Claude Code refuses every Skill call in -p mode.
 */
export function buildEnvelope(input: TierInput): Envelope {
  const { safe, humanOnly } = commandNames(input.type, input.runId);
  const skills = skillRules(input.type, input.runId);
  const fix = needsWorktree(input.type);
  if (fix && !input.worktree) throw new Error('a fix run needs its worktree to build its envelope');
  // An interactive session keeps all of Claude Code's tools: the person approves what it does.
  const tools = input.type === 'interactive' ? ['*'] : fix ? [...READ_TOOLS, ...EDIT_TOOLS] : READ_TOOLS;
  const allowed = fix ? [`Edit(/${input.worktree}/**)`, ...input.fixAllowed, ...skills] : skills;
  return {
    model: input.model,
    tools_allowlist: tools,
    safe_commands: safe,
    human_only_commands: humanOnly,
    extra: { allowed_tools: allowed },
  };
}

export function allowedTools(envelope: Envelope): string[] {
  const allowed = envelope.extra?.allowed_tools;
  return Array.isArray(allowed) ? allowed.filter((t): t is string => typeof t === 'string') : [];
}

/**
 * The envelope with the run's templates recorded (path and hash of each): they are part of what
 * the run was told, so config_hash covers them and `resume` notices when one changed.
 */
export function withTemplates(envelope: Envelope, templates: RunTemplates): Envelope {
  return { ...envelope, extra: { ...envelope.extra, templates: templateRecord(templates) } };
}
