import { AgentboxError } from '../errors.js';
import { closest } from '../util/suggest.js';

/**
 * The variables a template may use, filled for each run. The person's task is never searched for
 * variables: it reaches the agent verbatim.
 */
export const TEMPLATE_VARIABLES = [
  'task',
  'run',
  'run_id',
  'type',
  'branch',
  'repo',
  'repo_name',
  'worktree',
  'date',
  'attempt',
  'attempts',
  // The commit the run started from: a fix run's change is `git diff {{base}}` (HEAD after a revision).
  'base',
  // A revision's message (agentbox revise, src/run/revise.ts): the person's review, and which revision.
  'review',
  'revision',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Readonly<Record<TemplateVariable, string>>;

/** `{{ name }}`; `\{{` is a literal `{{`. */
const VARIABLE = /(\\?)\{\{\s*([^{}]*?)\s*\}\}/g;

export class TemplateVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly line: number,
    readonly suggestion: string | undefined,
  ) {
    super(`unknown variable {{${variable}}} on line ${line}`);
  }
}

/** Every variable a text uses, checked against the known set (throws on the first unknown one). */
export function checkVariables(text: string): void {
  fill(text, null);
}

/** Fills `{{name}}` with the run's values; throws TemplateVariableError on an unknown name. */
export function fillVariables(text: string, values: TemplateValues): string {
  return fill(text, values);
}

/**
 * The most characters a filled template may have: Claude Code takes at most 10 MB of prompt on its
 * stdin, and a 1 MB template that repeats `{{task}}` filled to 262 MB (1.1 GB of memory) first.
 */
export const MAX_FILLED = 8 * 1024 * 1024;

function fill(text: string, values: TemplateValues | null): string {
  let size = text.length;
  return text.replace(VARIABLE, (match, escaped: string, name: string, offset: number) => {
    if (escaped) return match.slice(1);
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
      const line = text.slice(0, offset).split('\n').length;
      throw new TemplateVariableError(name, line, closest(name, TEMPLATE_VARIABLES));
    }
    if (!values) return match;
    const value = values[name as TemplateVariable];
    size += value.length - match.length;
    if (size > MAX_FILLED)
      throw new AgentboxError(
        'CONFIG_INVALID',
        `a template fills to more than ${MAX_FILLED / 1024 / 1024} MB with this task (its {{${name}}} repeated): Claude Code takes at most 10 MB of prompt`,
        {
          hint: 'use the variable once or twice in the template, or give a shorter task (agentbox templates show <type> "<task>" renders it)',
        },
      );
    return value;
  });
}

/** SUP-2: the parts of a run's first message, in the one order they may have. */
export interface ComposedPrompt {
  readonly globalTemplate: string;
  readonly projectTemplate: string;
  readonly userPrompt: string;
  /** The shape of the final answer (the output template), shown after the task; empty: none. */
  readonly outputShape: string;
  readonly composed: string;
}

/**
 * The first user message: global template, project template, the person's task — always in this
 * order, each part present (under its own marker line) even when empty, and the task verbatim
 * (a task starting with "/" or "@" is never read as a command or a file mention: a marker line
 * comes first). The output template's shape, when the run has one, comes last.
 */
export function composePrompt(input: {
  readonly type: string;
  readonly globalTemplate: string;
  readonly projectTemplate: string;
  readonly userPrompt: string;
  readonly outputShape?: string;
  /** One of several attempts at the same task (`agentbox fix --attempts N`). */
  readonly attempt?: { readonly k: number; readonly of: number };
}): ComposedPrompt {
  const part = (marker: string, body: string) => `<!-- agentbox: ${marker} -->\n${body}`;
  const parts = [
    part('global template', input.globalTemplate.trim()),
    part('project template', input.projectTemplate.trim()),
    part(`${input.type} task (verbatim from the user)`, input.userPrompt),
  ];
  if (input.attempt && input.attempt.of > 1) parts.push(part('attempt', attemptNote(input.attempt)));
  const outputShape = input.outputShape?.trim() ?? '';
  if (outputShape)
    parts.push(
      part(
        'the shape of your final answer',
        `When you are done, your final reply must follow this shape (the headings are required; agentbox checks them):\n\n${outputShape}`,
      ),
    );
  return {
    globalTemplate: input.globalTemplate,
    projectTemplate: input.projectTemplate,
    userPrompt: input.userPrompt,
    outputShape,
    composed: `${parts.join('\n\n')}\n`,
  };
}

/** What an attempt is told of the others: it works alone, and is judged on its own. Pure. */
export function attemptNote(a: { readonly k: number; readonly of: number }): string {
  return `This is attempt ${a.k} of ${a.of} at this task. The other attempts work on it at the same time, each in its own worktree; work only in yours. Yours is judged on its own: the project's checks, the shape of your answer, and the size of your change.`;
}
