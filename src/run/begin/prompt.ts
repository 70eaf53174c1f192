import type { RunType } from '../../ledger/types.js';

export interface PromptInput {
  readonly type: RunType;
  readonly runName: string;
  readonly runId: string;
  readonly runDir: string;
  readonly worktree: string | null;
  readonly safeCommands: readonly string[];
}

const DELIVERABLE: Record<string, string> = {
  scout:
    'Investigate and answer the question. Do not change anything. Your final reply IS the report: agentbox saves it as report.md, so make it complete and self-contained (findings, evidence with file:line references, open questions).',
  plan: 'Work out a plan for the goal. Do not change anything. Your final reply IS the plan: agentbox saves it as plan.md, so make it a complete, ordered, actionable plan with the files involved and the risks.',
  review:
    'Review the code as asked. Do not change anything. Your final reply IS the review: agentbox saves it as report.md (findings by severity, with file:line references).',
  fix: 'Make the change in your worktree, run the relevant tests there, and stop when it is done. Your final reply becomes report.md: summarise what you changed and why, and how you verified it. agentbox exports every change in the worktree as changes.patch for a human to review and merge.',
};

/**
 * What the run adds to Claude Code's system prompt: where it is, what it may touch, what it must
 * hand back. The rules are also enforced by hooks and deny rules; this tells the model why a
 * refusal happened, so it does not waste turns retrying.
 */
export function systemPromptAddition(input: PromptInput): string {
  const lines = [
    `You are running inside agentbox run ${input.runName} (type: ${input.type}).`,
    `RUN_DIR=${input.runDir} — the only place for artifacts (notes, raw evidence under RUN_DIR/raw/); never write reports into the repository.`,
    input.worktree
      ? `Your working tree is ${input.worktree}, an isolated git worktree on its own branch. Edit files only there: writes anywhere else are refused.`
      : 'This run is read-only: you have no tool that edits files.',
    'The .agents/ run ledger (other runs, INDEX, pointers) is off limits, and so are `agentbox merge`, `agentbox discard` and the human-only commands: applying changes is a human decision.',
    `Your run's commands: ${input.safeCommands.map((c) => `/run_${input.runId}:${c}`).join(', ')}.`,
    DELIVERABLE[input.type] ?? '',
  ];
  return lines.filter(Boolean).join('\n');
}

/**
 * The first user message. The task is carried verbatim after a fixed first line, so a task that
 * starts with "/" or "@" is never taken as a slash command or a file mention.
 */
export function taskPrompt(type: RunType, task: string): string {
  return `agentbox ${type} task (verbatim from the user):\n${task}`;
}

export const CONTINUE_PROMPT = 'Continue the task where you left off.';

export function resumePrompt(more: string | undefined): string {
  return more ? `agentbox resume — more instructions from the user (verbatim):\n${more}` : CONTINUE_PROMPT;
}
