import { createHash } from 'node:crypto';
import path from 'node:path';
import { isInside } from '../airlock/paths.js';
import { AgentboxError, errnoCode } from '../errors.js';
import { MAX_CONFIG_BYTES, readRepoText, readTextIfExists } from '../util/fs.js';
import { checkVariables, TemplateVariableError } from './compose.js';
import { contractSchema, type OutputContract, toContract } from './contract.js';
import { type FrontMatter, splitFrontMatter } from './front-matter.js';
import { locateTemplates, type TemplateDirs } from './locate.js';

/** One template file as read: where from, its hash (for meta.yaml and config_hash), its parts. */
export interface LoadedTemplate {
  readonly path: string;
  readonly sha256: string;
  readonly body: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface RunTemplates {
  readonly globalInput: LoadedTemplate | null;
  readonly projectInput: LoadedTemplate | null;
  readonly output: (LoadedTemplate & { readonly contract: OutputContract }) | null;
}

const invalid = (file: string, problem: string, hint: string) =>
  new AgentboxError('TEMPLATE_INVALID', `template ${file}: ${problem}`, { hint });

/**
 * Reads one template: YAML front matter (src/templates/front-matter.ts) and a body whose variables are all known.
 * Every problem is an error naming the file, before any run folder exists.
 */
export function readTemplate(file: string, dirs?: TemplateDirs): LoadedTemplate {
  let text: string;
  try {
    // A project's template is read only from inside its repository (readRepoText): a template is
    // the prompt sent to the model; `.agentbox/templates/input.md -> ~/.ssh/id_rsa` would send the key.
    const root = dirs && isInside(file, dirs.project) ? path.dirname(path.dirname(dirs.project)) : null;
    const read = root ? readRepoText(file, root) : readTextIfExists(file, MAX_CONFIG_BYTES);
    if (read === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    text = read;
  } catch (error) {
    // The system's word when there is one (EACCES); what readTextIfExists refused (a folder, a
    // device, a link out of the repository) is said as it said it.
    const system = errnoCode((error as { cause?: unknown }).cause);
    if (!system && error instanceof AgentboxError) throw error;
    const why = system ?? errnoCode(error) ?? String(error);
    throw invalid(file, `cannot be read (${why})`, 'fix its permissions, or remove it');
  }
  let parsed: FrontMatter;
  try {
    parsed = splitFrontMatter(text);
  } catch (error) {
    throw invalid(
      file,
      `its front matter is not valid YAML: ${yamlProblem((error as Error).message)}`,
      'fix the block between the two --- lines at the top, or remove it',
    );
  }
  if (typeof parsed.data !== 'object' || parsed.data === null || Array.isArray(parsed.data)) {
    throw invalid(file, 'its front matter is not a mapping of keys', 'write it as key: value lines');
  }
  try {
    checkVariables(parsed.content);
  } catch (error) {
    if (!(error instanceof TemplateVariableError)) throw error;
    // Line numbers count from the top of the file, front matter included.
    const offset = text.split('\n').length - parsed.content.split('\n').length;
    throw invalid(
      file,
      `unknown variable {{${error.variable}}} on line ${error.line + offset}`,
      error.suggestion
        ? `did you mean {{${error.suggestion}}}? (write \\{{ for a literal {{)`
        : 'see "agentbox templates" for the variables; write \\{{ for a literal {{',
    );
  }
  return {
    path: file,
    sha256: createHash('sha256').update(text).digest('hex'),
    body: parsed.content,
    data: { ...parsed.data },
  };
}

function readContract(
  file: string,
  dirs: TemplateDirs,
): LoadedTemplate & { readonly contract: OutputContract } {
  const template = readTemplate(file, dirs);
  return { ...template, contract: contractOf(template) };
}

/** An output template's contract: its front matter checked (errors name the file and the key). */
export function contractOf(template: LoadedTemplate): OutputContract {
  const file = template.path;
  const checked = contractSchema.safeParse(template.data);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const where = issue.path.join('.') || '(front matter)';
    throw invalid(
      file,
      `front matter ${where}: ${issue.message}`,
      'an output template needs required_sections: [Summary, …]; violations.<type> may be correct or fail',
    );
  }
  return toContract(checked.data, template.body);
}

/** Everything a run of this type gets, read now: a change on disk applies to the next run only. */
export function loadRunTemplates(
  dirs: TemplateDirs,
  type: string,
  options: { readonly builtinOutput: boolean },
): RunTemplates {
  const found = locateTemplates(dirs, type, options);
  return {
    globalInput: found.globalInput ? readTemplate(found.globalInput, dirs) : null,
    projectInput: found.projectInput ? readTemplate(found.projectInput, dirs) : null,
    output: found.output ? readContract(found.output, dirs) : null,
  };
}

/** What meta.yaml records of a run's templates (and config_hash covers). */
export function templateRecord(t: RunTemplates): Record<string, unknown> {
  const one = (x: LoadedTemplate | null) => (x ? { path: x.path, sha256: x.sha256 } : null);
  return { global_input: one(t.globalInput), project_input: one(t.projectInput), output: one(t.output) };
}

/**
 * The YAML parser's first line, without the colon that introduced its code frame (the message
 * ended on it); its place is the file's line (the front matter is read with the line end after
 * its opening `---`). Pure.
 */
export function yamlProblem(message: string): string {
  const first = message.split('\n')[0]!.replace(/:\s*$/, '');
  return first.replace(
    / at line (\d+), column (\d+)$/,
    (_m, line: string, column: string) => ` (line ${line}, column ${column})`,
  );
}
