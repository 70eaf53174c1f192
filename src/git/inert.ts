/**
 * What makes every git agentbox runs inert to files an agent or a cloned repository wrote: a
 * worktree's tree (`.gitattributes`, a nested repository and its config, a `.git` file), a
 * fetched publication, a patch. Set by the one runner (exec.ts) on every call, in the
 * environment: git passes `GIT_CONFIG_PARAMETERS` on to the git processes it starts itself
 * (a submodule's `status`), so they hold in nested repositories too (measured, git 2.39).
 *
 * Decided from git-config(1), gitattributes(5), githooks(5) and git(1)'s environment:
 * - `core.fsmonitor` runs a command on every index refresh (`status`, `add`, `diff`): off.
 * - `core.hooksPath` to /dev/null: no hook runs, on any call — a nested repository's, one a patch
 *   planted, and the person's own at merge's commit (their hooks run the repository's files, which
 *   the agent wrote: src/gate/merge-git.ts). `personHooksPath` leaves it out for the one read of
 *   where the person's hooks are (config, `rev-parse --git-path hooks`), never for a command.
 * - `core.pager` and `GIT_PAGER` are `cat`: output is captured, never paged.
 * - Submodules are never entered: `submodule.recurse=false`, `diff.ignoreSubmodules=dirty` (only
 *   the recorded commit is compared, no git runs inside), `status.submoduleSummary=false`,
 *   `fetch.recurseSubmodules=false`, `push.recurseSubmodules=no`. A nested repository's config,
 *   attributes, filters and fsmonitor are therefore never read, let alone run.
 * - `protocol.ext.allow=never`: an `ext::` URL would run a command.
 * - External diff and textconv: `GIT_EXTERNAL_DIFF` is removed; `diff.external` and a driver's
 *   `diff.<driver>.command`/`textconv` come only from config the agent cannot write, and every
 *   diff agentbox reads passes `--no-ext-diff --no-textconv` (patch.ts). NOTE: `diff.external=`
 *   (empty) is not "off": git then fails running "".
 * - Filters (`filter.<driver>.clean/smudge/process`): a driver is defined only in config; the
 *   configs git reads here are the system's, the person's and the main repository's (read-only to
 *   the sandbox), never a nested one (above). A tree's `.gitattributes` can name only those; every
 *   git that reads or writes a run's files (the patch, checkpoints, the live diff, merge) switches
 *   each of them off by name (`config`, src/git/person-git.ts): a driver's program may run the
 *   repository's files, which the agent wrote.
 * - `include.path`/`includeIf`: followed only inside those same config files.
 * - The environment's own `GIT_CONFIG_PARAMETERS`/`GIT_CONFIG_COUNT` are replaced: config that
 *   nobody can see in a file does not apply to agentbox's git.
 * - `GIT_TERMINAL_PROMPT=0`: git never asks on a terminal; it fails instead.
 * Kept, as the person's own: identity, credential helpers, `core.sshCommand`/`GIT_SSH_COMMAND`
 * and askpass programs (push and fetch of `remote/` need them), signing, `core.editor` (never
 * opened: every commit gets its message).
 */
export const INERT_CONFIG: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['core.pager', 'cat'],
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'dirty'],
  ['status.submoduleSummary', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
  ['protocol.ext.allow', 'never'],
];

const NO_HOOKS = ['core.hooksPath', '/dev/null'] as const;

/** Settings for one call on top of the inert ones, as `key`, `value` pairs. */
export type GitSettings = readonly (readonly [string, string])[];

/** Variables removed from git's environment (config or programs nobody sees in a file). */
const DROPPED =
  /^(GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_EXTERNAL_DIFF)$/;

/**
 * `env` made inert: the variables above removed, the settings in `GIT_CONFIG_PARAMETERS` (the
 * form every git since 1.7 reads; `GIT_CONFIG_COUNT` needs 2.31). Pure.
 */
export function inertEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { personHooksPath?: boolean; personPager?: boolean; config?: GitSettings } = {},
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) if (!DROPPED.test(name)) out[name] = value;
  let settings: GitSettings = [
    ...(options.personHooksPath ? INERT_CONFIG : [...INERT_CONFIG, NO_HOOKS]),
    ...(options.config ?? []),
  ];
  // `agentbox diff` on a terminal pages as git would (GIT_PAGER, core.pager, PAGER): the pager is
  // the person's program, named in their environment or config, never in a tree.
  if (options.personPager) settings = settings.filter(([key]) => key !== 'core.pager');
  out.GIT_CONFIG_PARAMETERS = settings.map(([key, value]) => quote(`${key}=${value}`)).join(' ');
  if (!options.personPager) out.GIT_PAGER = 'cat';
  out.GIT_TERMINAL_PROMPT = '0';
  return out;
}

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
