import { AgentboxError } from '../errors.js';
import { fillVariables, type TemplateValues } from './compose.js';
import { type LoadedTemplate, readTemplate } from './load.js';
import { BUILTIN_DIR, levelFile, type TemplateDirs } from './locate.js';

/*
 * The message of a revision (`agentbox revise`): the revise template (`<type>.revise.md`, else
 * `revise.md`), the project's, else the person's, else the package's, filled with the run's values
 * and `{{review}}`, the person's review as src/review/feedback/ renders it. One template, not
 * composed like a run's first message: the session already has the global and project templates.
 */

/** `{{review}}` not escaped: where the person's review goes. */
const REVIEW_VARIABLE = /(^|[^\\])\{\{\s*review\s*\}\}/;

/** Where a run type's revise template is: the project's, the person's, the package's. */
export function locateReviseTemplate(dirs: TemplateDirs, type: string): string {
  const file =
    levelFile(dirs.project, 'revise', type) ??
    levelFile(dirs.global, 'revise', type) ??
    levelFile(BUILTIN_DIR, 'revise', type);
  if (!file) throw new Error(`no built-in revise template for ${type} in ${BUILTIN_DIR}`);
  return file;
}

/**
 * The revise template, read and checked: it must place `{{review}}`, or the person's review would
 * never reach the agent.
 */
export function loadReviseTemplate(dirs: TemplateDirs, type: string): LoadedTemplate {
  const template = readTemplate(locateReviseTemplate(dirs, type), dirs);
  if (!REVIEW_VARIABLE.test(template.body)) {
    throw new AgentboxError('TEMPLATE_INVALID', `template ${template.path}: it has no {{review}}`, {
      hint: "put {{review}} where the person's review goes, or remove the file to use the built-in one",
    });
  }
  return template;
}

/**
 * The revision's user turn: a fixed first line (so that a review starting with "/" or "@" is
 * never read as a command or a file mention, and a transcript shows where the revision began),
 * then the template filled. Pure.
 */
export function revisionMessage(template: Pick<LoadedTemplate, 'body'>, values: TemplateValues): string {
  return `${revisionMarker(Number(values.revision))}\n${fillVariables(template.body, values).trim()}\n`;
}

/** The first line of revision k's message. Pure. */
export function revisionMarker(k: number): string {
  return `<!-- agentbox: revision ${k} (agentbox revise) -->`;
}
