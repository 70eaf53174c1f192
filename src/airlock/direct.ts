import path from 'node:path';
import { isInside } from './paths.js';

/** Claude Code (by name or package) or a model API, in a shell command. */
const MODEL_CALL =
  /(?:^|[\s;&|()`'"=])(?:[^\s;&|()`'"=]*\/)?(?:claude|claude-code)(?=$|[\s;&|()`'"])|@anthropic-ai\/claude-code|api\.anthropic\.com|\bANTHROPIC_BASE_URL=/;
/** agentbox's own files in a worktree: the run's commands and Claude Code settings, and templates. */
const OWN_FILES = /(?:^|[\s'"=/<>])\.(?:claude|agentbox)\//;

/**
 * A direct_execution attempt (seed SUP-1/SUP-7): the agent running Claude Code or a model API
 * itself, or changing agentbox's hooks, settings or templates from inside its run. What it says
 * is for the log; the refusal itself is the sandbox's and the permission rules' (no network but
 * the endpoint, `.claude/` and `.agentbox/` not writable). Pure.
 * `refused`: the call failed by a refusal (a shell command that merely names `.claude/` and ran is
 * no attempt to change it).
 */
export function directExecution(
  tool: string,
  input: unknown,
  worktree: string | null,
  refused: boolean,
): string | null {
  const field = (key: string) => {
    const v =
      typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[key] : undefined;
    return typeof v === 'string' ? v : '';
  };
  if (tool === 'Bash') {
    const command = field('command');
    if (MODEL_CALL.test(command)) return `ran Claude Code or a model API itself: ${excerpt(command)}`;
    if (refused && OWN_FILES.test(command)) return `tried to change agentbox's files: ${excerpt(command)}`;
    return null;
  }
  if (!refused || !worktree || !['Write', 'Edit', 'MultiEdit', 'NotebookEdit'].includes(tool)) return null;
  const file = field('file_path') || field('notebook_path');
  if (!file) return null;
  const target = path.resolve(worktree, file);
  return [path.join(worktree, '.claude'), path.join(worktree, '.agentbox')].some((d) => isInside(target, d))
    ? `tried to change agentbox's files: ${target}`
    : null;
}

const excerpt = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
};
