import { CHANGE_MAX_BYTES, FILE_MAX_BYTES, type LeftOutRecord } from '../git/too-large.js';
import { terminalName } from '../util/terminal-text.js';
import { type NestedShown, nestedLines } from './nested.js';

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Why one file is not in the patch, in words. Pure. */
export function leftOutWhy(why: 'file' | 'change'): string {
  return why === 'file'
    ? `over the ${mib(FILE_MAX_BYTES)} a file may have`
    : `the whole change past ${mib(CHANGE_MAX_BYTES)}`;
}

/**
 * The lines that name the agent's files left out of the patch as too large — in the run's summary,
 * `show` and merge's prompt, beside the nested repositories: what a person merges is not all the
 * agent wrote. Each name escaped; none without any. Pure.
 */
export function leftOutLines(record: LeftOutRecord | null, warn: (text: string) => string): string[] {
  if (!record) return [];
  const count = record.files.length + record.more;
  const lines = record.files.map((f) => `  ${terminalName(f.path)}  (${mib(f.bytes)}: ${leftOutWhy(f.why)})`);
  if (record.more > 0) lines.push(`  … and ${record.more} more (events.jsonl: files_left_out)`);
  return [
    warn(`files too large for the patch, left out of it (${count}): they stay in the worktree`),
    ...lines,
  ];
}

/** What a patch leaves out of the agent's work: nested repositories, and files too large. */
export interface OutsidePatch {
  readonly nested: readonly NestedShown[];
  readonly leftOut: LeftOutRecord | null;
}

/** Both, as `show`, merge's prompt and the summary name them; none without any. Pure. */
export function outsidePatchLines(outside: OutsidePatch, warn: (text: string) => string): string[] {
  return [...nestedLines(outside.nested, warn), ...leftOutLines(outside.leftOut, warn)];
}
