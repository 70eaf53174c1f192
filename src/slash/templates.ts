import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AgentboxError } from '../errors.js';
import type { RunType } from '../ledger/types.js';

/** One template per kind: `templates/commands/<kind>.md`. */
export const SAFE_KINDS = ['scout', 'plan', 'fix', 'review', 'report'] as const;
export const HUMAN_ONLY_KINDS = ['merge', 'apply'] as const;
export type SafeKind = (typeof SAFE_KINDS)[number];
export type HumanOnlyKind = (typeof HUMAN_ONLY_KINDS)[number];
export type CommandKind = SafeKind | HumanOnlyKind;

/**
 * The commands the model may invoke, per run type. Every run also gets HUMAN_ONLY_KINDS. The
 * list stays short on purpose: descriptions of model-invocable commands share a small budget.
 */
export const SAFE_KINDS_BY_TYPE: Readonly<Record<RunType, readonly SafeKind[]>> = {
  scout: ['scout', 'report'],
  plan: ['plan', 'report'],
  fix: ['fix', 'report'],
  review: ['review', 'report'],
  interactive: ['report'],
};

/**
 * The templates folder for a module at `moduleUrl`. Two levels up works from both layouts:
 * `src/slash/templates.ts` (vitest, tsx) and `dist/slash/templates.js` (the package), and
 * `templates/` ships in the package next to `dist/`.
 */
export function templatesDirFor(moduleUrl: string): string {
  return fileURLToPath(new URL('../../templates/commands/', moduleUrl));
}

export const TEMPLATES_DIR: string = templatesDirFor(import.meta.url);

let cache: ReadonlyMap<CommandKind, string> | undefined;

/** Every template's text, read once per process. A missing one is a broken install. */
export function loadTemplates(): ReadonlyMap<CommandKind, string> {
  if (cache) return cache;
  const templates = new Map<CommandKind, string>();
  for (const kind of [...SAFE_KINDS, ...HUMAN_ONLY_KINDS]) {
    const file = `${TEMPLATES_DIR}${kind}.md`;
    try {
      // A checkout with autocrlf turns the templates' line ends into \r\n.
      templates.set(kind, fs.readFileSync(file, 'utf8').replace(/\r\n/g, '\n'));
    } catch (error) {
      throw new AgentboxError('IO_FAILED', `cannot read the slash command template ${file}`, {
        hint: 'the agentbox installation is incomplete: reinstall it (npm install -g agentbox)',
        cause: error,
      });
    }
  }
  cache = templates;
  return templates;
}
