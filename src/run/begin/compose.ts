import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { RunMeta, RunType } from '../../ledger/index.js';
import {
  type ComposedPrompt,
  composePrompt,
  fillVariables,
  type TemplateValues,
} from '../../templates/compose.js';
import type { OutputContract } from '../../templates/contract.js';
import { contractOf, loadRunTemplates, type RunTemplates, readTemplate } from '../../templates/load.js';
import { templateDirs } from '../../templates/locate.js';
import type { Env } from '../../util/env.js';
import { writeAtomic } from '../../util/fs.js';
import { taskPrompt } from './prompt.js';

/** Where a run keeps its composed prompt, its parts and a copy of its output template. */
export const PROMPT_FILE = 'prompt.md';
export const PROMPT_DIR = 'prompt';

/**
 * A run type's templates as they are now, read and checked (unknown variables, unreadable files,
 * invalid front matter are errors here, before any run folder exists).
 */
export function runTemplates(env: Env, repoRoot: string, type: string, config: Config): RunTemplates {
  return loadRunTemplates(templateDirs(env, repoRoot), type, {
    builtinOutput: !config.supervisor.allow_raw_output,
  });
}

/** The values a run's templates are filled with. */
export function templateValues(input: {
  readonly meta: Pick<RunMeta, 'run_name' | 'run_id' | 'type' | 'task' | 'repo_root' | 'options'> &
    Partial<Pick<RunMeta, 'repo_sha_start'>>;
  readonly worktree: string | null;
  readonly branch: string | null;
  /** A revision (agentbox revise): its number and the person's review, rendered. */
  readonly revision?: { readonly number: number; readonly review: string };
}): TemplateValues {
  const { meta } = input;
  return {
    task: meta.task,
    run: meta.run_name,
    run_id: meta.run_id,
    type: meta.type,
    branch: input.branch ?? '',
    repo: meta.repo_root,
    repo_name: path.basename(meta.repo_root),
    worktree: input.worktree ?? '',
    date: new Date().toISOString().slice(0, 10),
    attempt: String(attemptOf(meta)?.attempt ?? 1),
    attempts: String(attemptOf(meta)?.attempts ?? 1),
    base: meta.repo_sha_start ?? '',
    review: input.revision?.review ?? '',
    revision: String(input.revision?.number ?? 1),
  };
}

/** A run's values before it exists: its task, its names and paths as long as they may be. */
export function provisionalValues(
  type: RunType,
  task: string,
  repoRoot: string,
  fix: boolean,
): TemplateValues {
  const long = 'x'.repeat(255);
  return templateValues({
    meta: {
      run_name: long,
      run_id: 'xxxxxx',
      type,
      task,
      repo_root: repoRoot,
      options: {},
      repo_sha_start: long,
    },
    worktree: fix ? long : null,
    branch: fix ? long : null,
  });
}

/** A group's attempt: its place (meta.yaml options.group, written by src/group/); undefined for a lone run. */
export function attemptOf(meta: Pick<RunMeta, 'options'>): { attempt: number; attempts: number } | undefined {
  const g = meta.options?.group as { attempt?: unknown; attempts?: unknown } | undefined;
  if (!g || typeof g.attempt !== 'number' || typeof g.attempts !== 'number') return undefined;
  return { attempt: g.attempt, attempts: g.attempts };
}

/** The composed prompt of a run, filled. Pure apart from what `templates` already read. */
export function composeRunPrompt(templates: RunTemplates, values: TemplateValues): ComposedPrompt {
  const fill = (t: { body: string } | null) => (t ? fillVariables(t.body, values) : '');
  return composePrompt({
    type: values.type,
    globalTemplate: fill(templates.globalInput),
    projectTemplate: fill(templates.projectInput),
    userPrompt: values.task,
    outputShape: fill(templates.output),
    attempt: { k: Number(values.attempt), of: Number(values.attempts) },
  });
}

/**
 * Records the run's prompt in its folder: prompt.md (what claude gets), prompt/ with the three
 * parts and the output template as it was (the run checks its answer against this copy: a
 * template changed on disk applies to the next run, never to a running one).
 */
export async function writeRunPrompt(
  runDir: string,
  composed: ComposedPrompt,
  templates: RunTemplates,
): Promise<void> {
  const dir = path.join(runDir, PROMPT_DIR);
  fs.mkdirSync(dir, { recursive: true });
  // Five new files, side by side: one after the other they took ~10 ms before claude could start.
  await Promise.all([
    writeAtomic(path.join(dir, 'global.md'), composed.globalTemplate),
    writeAtomic(path.join(dir, 'project.md'), composed.projectTemplate),
    writeAtomic(path.join(dir, 'task.md'), composed.userPrompt),
    ...(templates.output
      ? [writeAtomic(path.join(dir, 'output.md'), fs.readFileSync(templates.output.path, 'utf8'))]
      : []),
    writeAtomic(path.join(runDir, PROMPT_FILE), composed.composed),
  ]);
}

/** The run's first message: prompt.md, or for a run created before templates, the task alone. */
export function readRunPrompt(runDir: string, meta: RunMeta): string {
  try {
    return fs.readFileSync(path.join(runDir, PROMPT_FILE), 'utf8');
  } catch {
    return taskPrompt(meta.type, meta.task);
  }
}

/** The run's output contract (its copy of the template), or null when it has none. */
export function readRunContract(runDir: string): OutputContract | null {
  const file = path.join(runDir, PROMPT_DIR, 'output.md');
  if (!fs.existsSync(file)) return null;
  return contractOf(readTemplate(file));
}
