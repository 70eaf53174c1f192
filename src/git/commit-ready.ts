import fs from 'node:fs';
import { AgentboxError } from '../errors.js';
import { runGit } from './exec.js';
import type { GitSettings } from './inert.js';

/**
 * Whether git would commit here, asked before `merge --commit` makes its commit (commit-patch.ts): a
 * commit that failed after the apply left the merged files in the tree, the run still in REVIEW,
 * and a second merge refused on its own files (found by a user's eye). Each blocker is one reason
 * `git commit` refuses a partial commit for: no identity (user.name/user.email, strict, as commit asks),
 * a merge, cherry-pick or revert under way, unmerged paths in the index.
 */
export async function refuseUncommittable(root: string, config: GitSettings, runId: string): Promise<void> {
  const blocker = await commitBlocker(root, config);
  if (blocker) throw uncommittable(root, blocker, runId);
}

export type CommitBlocker =
  | { readonly kind: 'identity'; readonly said: string }
  | { readonly kind: 'operation'; readonly head: string }
  | { readonly kind: 'unmerged'; readonly count: number };

const OPERATIONS = ['MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'] as const;

async function commitBlocker(root: string, config: GitSettings): Promise<CommitBlocker | null> {
  const git = (...args: string[]) => runGit(args, { cwd: root, config });
  const [author, committer, paths, unmerged] = await Promise.all([
    git('var', 'GIT_AUTHOR_IDENT'),
    git('var', 'GIT_COMMITTER_IDENT'),
    git('rev-parse', ...OPERATIONS.flatMap((head) => ['--git-path', head])),
    git('ls-files', '-u', '-z'),
  ]);
  for (const ident of [author, committer])
    if (ident.exitCode !== 0) return { kind: 'identity', said: firstLine(ident.stderr) };
  const heads = paths.stdout.split('\n');
  const under = OPERATIONS.find((_, i) => heads[i] && fs.existsSync(absolute(root, heads[i]!)));
  if (under) return { kind: 'operation', head: under };
  const count = new Set(
    unmerged.stdout
      .split('\0')
      .filter(Boolean)
      .map((l) => l.slice(l.indexOf('\t') + 1)),
  ).size;
  return count > 0 ? { kind: 'unmerged', count } : null;
}

/** The refusal for a blocker: nothing was changed, and what to do. Pure. */
export function uncommittable(root: string, blocker: CommitBlocker, runId: string): AgentboxError {
  const without = `or merge without --commit (agentbox merge ${runId}) and commit yourself`;
  switch (blocker.kind) {
    case 'identity':
      return new AgentboxError(
        'MERGE_REFUSED',
        `refusing to merge with --commit: git cannot make a commit in ${root} (${blocker.said || 'no user.name or user.email'})`,
        {
          hint: `nothing was changed. Tell git who you are (git config user.name "Your Name" && git config user.email you@example.com), then merge again; ${without}`,
        },
      );
    case 'operation': {
      const what = { MERGE_HEAD: 'merge', CHERRY_PICK_HEAD: 'cherry-pick', REVERT_HEAD: 'revert' }[
        blocker.head as (typeof OPERATIONS)[number]
      ];
      return new AgentboxError(
        'MERGE_REFUSED',
        `refusing to merge with --commit: a git ${what} is under way in ${root} (${blocker.head}), and git commits no part of the tree during one`,
        {
          hint: `nothing was changed. Finish it (git ${what} --continue) or abort it (git ${what} --abort), then merge again; ${without}`,
        },
      );
    }
    case 'unmerged':
      return new AgentboxError(
        'MERGE_REFUSED',
        `refusing to merge with --commit: ${blocker.count} path(s) in ${root} are unmerged (a conflict not yet resolved), and git commits nothing until they are`,
        {
          hint: `nothing was changed. Resolve them (git status lists them; git add each one), then merge again; ${without}`,
        },
      );
  }
}

/** git's reason: its `fatal:` line, else its first. */
function firstLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim());
  const fatal = lines.find((l) => l.startsWith('fatal: '));
  return fatal ? fatal.slice('fatal: '.length) : (lines.find((l) => l.length > 0) ?? '');
}

function absolute(root: string, p: string): string {
  return p.startsWith('/') ? p : `${root}/${p}`;
}
