import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `revise`: the message of a revision (agentbox revise), see src/templates/revise.ts. */
export type TemplateKind = 'input' | 'output' | 'revise';
export type TemplateLevel = 'global' | 'project';

/** Run types a template may name (`<type>.input.md`). */
export const TEMPLATE_TYPES = ['scout', 'plan', 'fix', 'review', 'interactive'] as const;

/** The package's own defaults (`templates/` beside dist/ and src/). */
export const BUILTIN_DIR = fileURLToPath(new URL('../../templates/', import.meta.url));

export interface TemplateDirs {
  /** The person's global templates: beside the user config file. */
  readonly global: string | null;
  /** The project's, committed with it. */
  readonly project: string;
}

/**
 * `templates/` beside the user config file: `$AGENTBOX_CONFIG`'s folder, else
 * `$XDG_CONFIG_HOME/agentbox/`, else `~/.config/agentbox/`; and `.agentbox/templates/` at the
 * repository root.
 */
export function templateDirs(
  env: Readonly<Record<string, string | undefined>>,
  repoRoot: string,
): TemplateDirs {
  const base = env.AGENTBOX_CONFIG
    ? path.dirname(path.resolve(env.AGENTBOX_CONFIG))
    : env.XDG_CONFIG_HOME
      ? path.join(env.XDG_CONFIG_HOME, 'agentbox')
      : env.HOME
        ? path.join(env.HOME, '.config', 'agentbox')
        : null;
  return {
    global: base ? path.join(base, 'templates') : null,
    project: path.join(repoRoot, '.agentbox', 'templates'),
  };
}

/** The file one level gives a run type: `<type>.<kind>.md` replaces `<kind>.md`; null: none. */
export function levelFile(dir: string | null, kind: TemplateKind, type: string): string | null {
  if (!dir) return null;
  for (const name of [`${type}.${kind}.md`, `${kind}.md`]) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/**
 * Where each part of a run's templates comes from. The global level falls back to the package's
 * defaults when the person has none of their own (an empty file of theirs turns a default off).
 * The output template: the project's, else the person's; the package's only when asked for
 * (`supervisor.allow_raw_output: false`).
 */
export function locateTemplates(
  dirs: TemplateDirs,
  type: string,
  options: { readonly builtinOutput: boolean },
): {
  readonly globalInput: string | null;
  readonly projectInput: string | null;
  readonly output: string | null;
} {
  return {
    globalInput: levelFile(dirs.global, 'input', type) ?? levelFile(BUILTIN_DIR, 'input', type),
    projectInput: levelFile(dirs.project, 'input', type),
    output:
      levelFile(dirs.project, 'output', type) ??
      levelFile(dirs.global, 'output', type) ??
      (options.builtinOutput ? levelFile(BUILTIN_DIR, 'output', type) : null),
  };
}
