import { shellWord } from './source.js';

/**
 * The shell a CI job or a Kubernetes Job runs, shared by every engine so that each runs the same
 * headless run. Every input (the task, the run type, an issue comment) arrives in an environment
 * variable and is only ever expanded inside double quotes: nothing a person typed becomes shell
 * code, and nothing is spliced into these texts by the platforms' own `${{ }}` / `$VAR` templating.
 */

/** Every script stops at the first failing command and at an unset variable. */
export const STRICT = 'set -euo pipefail\n';

/** The Claude Code release agentbox is measured against (the devDependency; a test holds them equal). */
export const CLAUDE_CODE_VERSION = '2.1.330';

/**
 * What a runner installs with npm: agentbox from the source the person chose (src/engines/source.ts,
 * one single-quoted word) and the Claude Code it was measured with.
 */
export function installScript(source: string): string {
  return `npm install --global --no-fund --no-audit ${shellWord(source)} "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"\n`;
}

/**
 * Git credentials for the push, from `GIT_PUSH_TOKEN` at the moment git asks: the token stays in
 * the environment of agentbox, and the agent's environment is a whitelist that never holds it.
 * Runs are committed under agentbox's own name when the runner has none.
 */
export const GIT_SETUP = `git config --global credential.helper '!f() { test "$1" = get || exit 0; echo "username=\${GIT_PUSH_USER:-x-access-token}"; echo "password=\${GIT_PUSH_TOKEN:-}"; }; f'
git config --global user.name >/dev/null || git config --global user.name "agentbox"
git config --global user.email >/dev/null || git config --global user.email "agentbox@localhost"
`;

/**
 * Checks AGENTBOX_TYPE and AGENTBOX_TASK, then runs the run headless and publishes it with --push.
 * AGENTBOX_MODEL and AGENTBOX_BUDGET (USD) are optional. The exit code is the run's (see
 * docs/commands.md); `after` runs whatever the run's outcome, before the script exits with it.
 */
export function runScript(after = ''): string {
  return `case "\${AGENTBOX_TYPE:-}" in
  scout | plan | fix | review) ;;
  *)
    echo "agentbox: the run type \\"\${AGENTBOX_TYPE:-}\\" is not one of scout, plan, fix, review" >&2
    exit 2
    ;;
esac
if [ -z "\${AGENTBOX_TASK//[[:space:]]/}" ]; then
  echo "agentbox: the task is empty: say what the run should do" >&2
  exit 2
fi
args=("$AGENTBOX_TYPE")
if [ -n "\${AGENTBOX_MODEL:-}" ]; then args+=("--model=$AGENTBOX_MODEL"); fi
if [ -n "\${AGENTBOX_BUDGET:-}" ]; then args+=("--max-cost=$AGENTBOX_BUDGET"); fi
agentbox init
# CI runs the repository's own code on purpose (runs.setup, runs.verify, its Claude Code hooks), at
# the commit this pipeline checked out: it grants workspace trust explicitly (agentbox docs/security.md).
agentbox trust --yes
status=0
agentbox "\${args[@]}" --push -- "$AGENTBOX_TASK" || status=$?
${after}exit "$status"
`;
}

/**
 * A GitHub event → AGENTBOX_TYPE and AGENTBOX_TASK: a manual dispatch says both; a labelled issue
 * is a fix of that issue; a comment `/agentbox <type> <task…>` says both (the task may go on for
 * lines; without one, the issue is the task). Only bash parameter expansion: nothing is evaluated.
 */
export const GITHUB_REQUEST = `issue="GitHub issue #\${ISSUE_NUMBER:-}: \${ISSUE_TITLE:-}"$'\\n\\n'"\${ISSUE_BODY:-}"
case "\${EVENT_NAME:-}" in
  workflow_dispatch)
    AGENTBOX_TYPE="\${INPUT_TYPE:-}"
    AGENTBOX_TASK="\${INPUT_TASK:-}"
    ;;
  issues)
    AGENTBOX_TYPE=fix
    AGENTBOX_TASK="$issue"
    ;;
  issue_comment)
    body="\${COMMENT_BODY//$'\\r'/}"
    first="\${body%%$'\\n'*}"
    rest="\${body#"$first"}"
    words="\${first#/agentbox}"
    words="\${words#"\${words%%[![:space:]]*}"}"
    AGENTBOX_TYPE="\${words%%[[:space:]]*}"
    AGENTBOX_TASK="\${words#"$AGENTBOX_TYPE"}$rest"
    AGENTBOX_TASK="\${AGENTBOX_TASK#"\${AGENTBOX_TASK%%[![:space:]]*}"}"
    AGENTBOX_TASK="\${AGENTBOX_TASK%"\${AGENTBOX_TASK##*[![:space:]]}"}"
    if [ -z "\${AGENTBOX_TASK//[[:space:]]/}" ]; then AGENTBOX_TASK="$issue"; fi
    ;;
  *)
    echo "agentbox: this workflow does not start runs on \\"\${EVENT_NAME:-}\\" events" >&2
    exit 2
    ;;
esac
export AGENTBOX_TYPE AGENTBOX_TASK
`;
