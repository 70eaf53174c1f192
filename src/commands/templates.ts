import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { CommandContext } from '../context.js';
import { AgentboxError } from '../errors.js';
import { findRepo } from '../git/repo.js';
import { RUN_TYPES } from '../ledger/types.js';
import { composeRunPrompt, runTemplates } from '../run/begin/compose.js';
import { TEMPLATE_VARIABLES } from '../templates/compose.js';
import type { RunTemplates } from '../templates/load.js';
import { BUILTIN_DIR, templateDirs } from '../templates/locate.js';
import { locateReviseTemplate } from '../templates/revise.js';
import { loadTrustedConfig } from '../trust/index.js';
import { terminalJson } from '../util/json-out.js';

export interface TemplatesOptions {
  readonly json?: boolean;
}

/**
 * Each run type's templates, `interactive` included (the first task of `agentbox start`). A person's
 * own session has no output contract: only its input templates apply (src/interactive/open-run.ts).
 */
function templatesOf(ctx: CommandContext, repoRoot: string, type: string, config: Config): RunTemplates {
  const templates = runTemplates(ctx.env, repoRoot, type, config);
  return type === 'interactive' ? { ...templates, output: null } : templates;
}

/** Where a template file comes from, as a person reads it. */
function source(file: string | null, repoRoot: string): string {
  if (!file) return '—';
  if (file.startsWith(BUILTIN_DIR)) return `built-in ${path.basename(file)}`;
  return file.startsWith(repoRoot + path.sep) ? path.relative(repoRoot, file) : file;
}

/** `agentbox templates`: the effective templates of each run type, and where each comes from. */
export async function list(ctx: CommandContext, options: TemplatesOptions): Promise<number> {
  const repo = await findRepo(ctx.cwd, ctx.env);
  const { config } = loadTrustedConfig({ repoRoot: repo.root, env: ctx.env });
  const rows = RUN_TYPES.map((type) => {
    const t = templatesOf(ctx, repo.root, type, config);
    return {
      type,
      global_input: t.globalInput?.path ?? null,
      project_input: t.projectInput?.path ?? null,
      output: t.output?.path ?? null,
      required_sections: t.output?.contract.requiredSections ?? [],
      // The message of a revision (agentbox revise): fix runs only.
      ...(type === 'fix' ? { revise: locateReviseTemplate(templateDirs(ctx.env, repo.root), type) } : {}),
    };
  });
  const dirs = templateDirs(ctx.env, repo.root);
  if (options.json) {
    ctx.io.out(`${terminalJson({ dirs, variables: TEMPLATE_VARIABLES, types: rows }, 2)}\n`);
    return 0;
  }
  const lines = [
    `global templates:  ${dirs.global ?? '(no HOME: none)'}`,
    `project templates: ${path.relative(repo.root, dirs.project)}`,
    '',
  ];
  for (const r of rows) {
    lines.push(`${r.type}`);
    lines.push(`  input, global:  ${source(r.global_input, repo.root)}`);
    lines.push(`  input, project: ${source(r.project_input, repo.root)}`);
    lines.push(
      `  output:         ${r.output ? `${source(r.output, repo.root)} (required: ${r.required_sections.join(', ')})` : r.type === 'interactive' ? '— (a session of your own has no output contract)' : '— (the raw answer is the report)'}`,
    );
    if ('revise' in r && r.revise) lines.push(`  revise:         ${source(r.revise, repo.root)}`);
  }
  lines.push('', `variables: ${TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(' ')}`);
  lines.push('see the composed prompt: agentbox templates show <type> "<task>"');
  ctx.io.out(`${lines.join('\n')}\n`);
  return 0;
}

/** `agentbox templates show <type> "<task>"`: the prompt a run would get, without running anything. */
export async function show(ctx: CommandContext, type: string, task: string): Promise<number> {
  if (!(RUN_TYPES as readonly string[]).includes(type)) {
    throw new AgentboxError('USAGE', `unknown run type "${type}"`, {
      hint: `use one of: ${RUN_TYPES.join(', ')}`,
    });
  }
  const repo = await findRepo(ctx.cwd, ctx.env);
  const { config } = loadTrustedConfig({ repoRoot: repo.root, env: ctx.env });
  const templates = templatesOf(ctx, repo.root, type, config);
  const fix = type === 'fix';
  const composed = composeRunPrompt(templates, {
    task,
    run: '<run>',
    run_id: '<id>',
    type,
    branch: fix ? 'agentbox/<run>' : '',
    repo: repo.root,
    repo_name: path.basename(repo.root),
    worktree: fix ? '<worktree>' : '',
    base: '<base>',
    attempt: '1',
    attempts: '1',
    review: '',
    revision: '1',
    date: new Date().toISOString().slice(0, 10),
  });
  ctx.io.out(composed.composed);
  return 0;
}
