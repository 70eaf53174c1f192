import { formatDuration } from '../config/duration.js';

export interface ToolRecord {
  readonly name: string;
  readonly ok: boolean;
  /** A short excerpt of the input and output, one line. */
  readonly excerpt: string;
}

export interface PromptInput {
  readonly task: string;
  readonly iteration: number;
  readonly maxIterations: number;
  readonly elapsedMs: number;
  readonly tools: readonly ToolRecord[];
  readonly lastMessage: string;
  readonly runType: string;
}

const LAST_TOOLS = 15;
const MESSAGE_LIMIT = 4000;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

/**
 * The prompt of one supervisor decision: the task verbatim, where the run stands, what the agent
 * did last and said last, and the three answers it may give. Pure.
 */
export function supervisorPrompt(input: PromptInput): string {
  const tools = input.tools.slice(-LAST_TOOLS);
  const toolLines = tools.length
    ? tools.map((t, i) => `${i + 1}. ${t.name} [${t.ok ? 'OK' : 'ERROR'}] ${t.excerpt}`).join('\n')
    : '(no tool calls yet)';
  return [
    'You supervise a Claude Code agent working on a task for a user. The agent has just stopped;',
    'decide whether its work is done.',
    '',
    '<task>',
    input.task,
    '</task>',
    '',
    `Run type: ${input.runType}`,
    `Iteration ${input.iteration}/${input.maxIterations}`,
    `Elapsed: ${formatDuration(input.elapsedMs)}`,
    '',
    `Last tool calls (oldest first, at most ${LAST_TOOLS}):`,
    toolLines,
    '',
    "The agent's last message:",
    '<message>',
    clip(input.lastMessage.trim() || '(empty)', MESSAGE_LIMIT),
    '</message>',
    '',
    'Answer with exactly one of these, and nothing else:',
    '[COMPLETE] <one-line summary>   — the task is done as asked',
    '[ABORT] <reason>                — something is wrong and continuing would make it worse',
    '[CONTINUE] <exact text to send> — the agent must go on; this text is sent to it verbatim as its next instruction',
  ].join('\n');
}

/** A one-line excerpt of a tool call for the prompt. Pure. */
export function toolExcerpt(input: unknown, output: string, max = 160): string {
  const i = typeof input === 'object' && input !== null ? JSON.stringify(input) : String(input ?? '');
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
  const text = `${oneLine(i)}${output ? ` → ${oneLine(output)}` : ''}`;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
