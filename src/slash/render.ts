import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { parseRunName, RUN_ID_RE } from '../ledger/names.js';
import { RUN_TYPES, type RunType } from '../ledger/types.js';
import { type CommandKind, HUMAN_ONLY_KINDS, loadTemplates, SAFE_KINDS_BY_TYPE } from './templates.js';

export interface RunCommandsSpec {
  runId: string;
  runName: string;
  type: RunType;
  /** Absolute. */
  runDir: string;
  /** Absolute; fix runs only (their commands grant edits inside it). */
  worktree: string | null;
}

export interface RenderedCommand {
  /** `scout_a1b2c3` */
  name: string;
  /** `scout_a1b2c3.md` */
  file: string;
  humanOnly: boolean;
  content: string;
}

/** Throws unless `runId` is a short run id: no path is ever built from anything else. */
export function assertRunId(runId: string): void {
  if (!RUN_ID_RE.test(runId)) {
    throw new AgentboxError(
      'RUN_NAME_INVALID',
      `not a run id (6 lowercase hex digits): ${JSON.stringify(runId)}`,
    );
  }
}

/** The folder name under `.claude/commands/`; Claude Code turns it into the `run_<id>:` namespace. */
export const commandDirName = (runId: string): string => `run_${runId}`;

/** Names as meta.yaml records them and config_hash hashes them. */
export function commandNames(type: RunType, runId: string): { safe: string[]; humanOnly: string[] } {
  assertRunId(runId);
  const kinds = SAFE_KINDS_BY_TYPE[type];
  if (!kinds) throw new AgentboxError('USAGE', `unknown run type: ${JSON.stringify(type)}`);
  return {
    safe: kinds.map((kind) => `${kind}_${runId}`),
    humanOnly: HUMAN_ONLY_KINDS.map((kind) => `${kind}_${runId}`),
  };
}

/** What a person types after `/`, and what the Skill tool takes: `run_a1b2c3:scout_a1b2c3`. */
export function slashName(runId: string, name: string): string {
  assertRunId(runId);
  return `${commandDirName(runId)}:${name}`;
}

/**
 * `--allowedTools` rules that let the model invoke the run's safe commands in `-p` mode.
 * NOTE: without them Claude Code 2.1.330 refuses every Skill call headlessly ("Execute skill: …
 * The user can add the allow rule Skill(…)"). Human-only commands stay refused even with a rule.
 */
export function skillRules(type: RunType, runId: string): string[] {
  return commandNames(type, runId).safe.map((name) => `Skill(${slashName(runId, name)})`);
}

/**
 * Why `dir` cannot go into a command file, or null. Claude Code interprets command files: `$1`
 * and `$ARGUMENTS` are substituted and !`cmd` runs a shell command (measured), a whitespace + `@`
 * includes a file; in `allowed-tools` a comma splits a rule (even inside its parentheses) and glob
 * characters would widen it. A path with any of those would make the command lie or grant more.
 */
export function commandPathProblem(dir: string): string | null {
  if (!path.isAbsolute(dir)) return 'it is not absolute';
  const trimmed = dir.replace(/\/+$/, '');
  // `/` would read `Edit(///**)` in a rule: every file.
  if (trimmed === '') return 'it is the root folder';
  if (path.normalize(trimmed) !== trimmed) return 'it is not normalized (// . or .. in it)';
  const bad = /[\u0000-\u001f\u007f$`,*?[\]{}"\\]/.exec(dir);
  if (bad) return `it contains ${JSON.stringify(bad[0])}`;
  if (/\s@/.test(dir)) return 'it contains a space followed by "@"';
  return null;
}

function checkedPath(label: string, dir: string): string {
  const problem = commandPathProblem(dir);
  if (problem) {
    throw new AgentboxError(
      'USAGE',
      `cannot write slash commands naming ${label} ${JSON.stringify(dir)}: ${problem}`,
      {
        hint: 'Claude Code would interpret that character in a command file; move or rename the folder',
      },
    );
  }
  return dir.replace(/\/+$/, '');
}

const PLACEHOLDER_RE = /\{\{([A-Z_]+)\}\}/g;
const FRONTMATTER_RE = /^---\n([\s\S]*?\n)---\n/;
const HUMAN_ONLY_RE = /^disable-model-invocation:\s*true\s*$/m;

/**
 * The run's command files, from the templates. Values go in verbatim (they were checked above);
 * the task is never put in a command: it is user text, and Claude Code would expand `$1`, run
 * !`…` and include `@file` found in it. The agent has the task from its prompt.
 */
export function renderRunCommands(spec: RunCommandsSpec): RenderedCommand[] {
  assertRunId(spec.runId);
  if (!RUN_TYPES.includes(spec.type))
    throw new AgentboxError('USAGE', `unknown run type: ${JSON.stringify(spec.type)}`);
  if (parseRunName(spec.runName)?.id !== spec.runId) {
    throw new AgentboxError(
      'RUN_NAME_INVALID',
      `run name ${JSON.stringify(spec.runName)} does not end in run id ${spec.runId}`,
    );
  }
  const values: Readonly<Record<string, string>> = {
    RUN_ID: spec.runId,
    RUN_NAME: spec.runName,
    RUN_DIR: checkedPath('the run folder', spec.runDir),
    WORKTREE: spec.worktree === null ? '' : checkedPath('the worktree', spec.worktree),
  };
  const templates = loadTemplates();
  const kinds = [
    ...SAFE_KINDS_BY_TYPE[spec.type].map((kind) => ({ kind, humanOnly: false })),
    ...HUMAN_ONLY_KINDS.map((kind) => ({ kind, humanOnly: true })),
  ];
  return kinds.map(({ kind, humanOnly }) => {
    const name = `${kind}_${spec.runId}`;
    const content = fill(kind, templates.get(kind) ?? '', values, spec.type);
    const frontmatter = FRONTMATTER_RE.exec(content)?.[1] ?? '';
    // The one line that keeps a merge away from the model: never trust a template edit with it.
    if (HUMAN_ONLY_RE.test(frontmatter) !== humanOnly) {
      throw new AgentboxError(
        'CHECK_FAILED',
        `template ${kind}.md: disable-model-invocation must be ${humanOnly}`,
      );
    }
    return { name, file: `${name}.md`, humanOnly, content };
  });
}

function fill(
  kind: CommandKind,
  template: string,
  values: Readonly<Record<string, string>>,
  type: RunType,
): string {
  // NOTE: biome formats the templates and puts a blank line after the opening `---`; the
  // commands are written without it.
  const source = template.replace(/^---\n(?:[ \t]*\n)+/, '---\n');
  const match = FRONTMATTER_RE.exec(source);
  if (!match)
    throw new AgentboxError(
      'CHECK_FAILED',
      `template ${kind}.md does not start with a --- frontmatter block`,
    );
  const substitute = (text: string, inFrontmatter: boolean) =>
    text.replace(PLACEHOLDER_RE, (whole, key: string) => {
      const value = values[key];
      if (value === undefined)
        throw new AgentboxError('CHECK_FAILED', `template ${kind}.md: unknown placeholder ${whole}`);
      // An empty path in a rule would read `Edit(//**)`: everything.
      if (inFrontmatter && value === '') {
        throw new AgentboxError(
          'USAGE',
          `the ${kind} command of a ${type} run needs ${key}, and there is none`,
          {
            hint:
              key === 'WORKTREE'
                ? 'fix runs edit in a worktree: create it before writing the commands'
                : undefined,
          },
        );
      }
      return value;
    });
  const head = match[0];
  return substitute(head, true) + substitute(source.slice(head.length), false);
}
