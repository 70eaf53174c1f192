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

function fill(text: string, values: TemplateValues | null): string {
  return text.replace(VARIABLE, (match, escaped: string, name: string, offset: number) => {
    if (escaped) return match.slice(1);
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
      const line = text.slice(0, offset).split('\n').length;
      throw new TemplateVariableError(name, line, closest(name, TEMPLATE_VARIABLES));
    }
    return values ? values[name as TemplateVariable] : match;
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
