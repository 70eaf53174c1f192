import { runGit } from './exec.js';
import { patchPaths } from './patch.js';

/**
 * The paths `git apply` would change that no `diff --git` section of the patch names (git also
 * applies bare `---`/`+++` sections, which inspection does not read): git's own parser asked, its
 * list set against the one inspection saw.
 */
export async function uninspectedPaths(repoRoot: string, file: string, patch: Buffer): Promise<string[]> {
  if (patch.length === 0) return [];
  const result = await runGit(['apply', '--numstat', '-z', '--', file], { cwd: repoRoot });
  // (a patch git cannot read is refused by the apply itself)
  if (result.exitCode !== 0) return [];
  const named = new Set(patchPaths(patch));
  return numstatPaths(result.stdout).filter((name) => !named.has(name));
}

/**
 * The paths of `--numstat -z` records: `added\tdeleted\tpath\0`, or for a rename or copy
 * `added\tdeleted\t\0from\0to\0`. Pure.
 */
export function numstatPaths(out: string): string[] {
  const fields = out.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const tab = field.indexOf('\t', field.indexOf('\t') + 1);
    if (tab < 0) continue;
    const name = field.slice(tab + 1);
    if (name !== '') paths.push(name);
    else {
      paths.push(fields[i + 1] ?? '', fields[i + 2] ?? '');
      i += 2;
    }
  }
  return paths.filter((name) => name !== '');
}
