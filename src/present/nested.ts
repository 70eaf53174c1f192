import { terminalLine, terminalName } from '../util/terminal-text.js';

/** A nested repository a run's end left out of its patch (events.jsonl `nested_git`), as shown. */
export interface NestedShown {
  /** The folder holding the `.git`, relative to the worktree: the agent chose it. */
  readonly path: string;
  readonly kind: string;
  /** Where its `.git` went, relative to the run folder; null: not moved (`error` says why). */
  readonly moved_to: string | null;
  readonly error?: string;
}

/**
 * The lines that name the nested repositories left out of a patch — in the run's summary, `show`
 * and merge's prompt, so a person deciding on the patch knows what is not in it; none without
 * any. Each folder by its real name (escaped, quoted when it must be). Pure.
 */
export function nestedLines(nested: readonly NestedShown[], warn: (text: string) => string): string[] {
  if (nested.length === 0) return [];
  const heading = `nested repositories, never followed, left out of the patch (${nested.length})`;
  const line = (n: NestedShown) =>
    `  ${terminalName(`${n.path}/`)}  (.git ${n.kind}) → ${n.moved_to === null ? `not moved: ${terminalLine(n.error ?? '?')}` : terminalName(n.moved_to)}`;
  return [warn(heading), ...nested.map(line)];
}
