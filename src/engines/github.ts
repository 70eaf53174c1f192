import { renderYaml } from './render.js';
import { GIT_SETUP, GITHUB_REQUEST, installScript, runScript, STRICT } from './script.js';
import { sourceComment } from './source.js';

/** The label that turns an issue into a fix run. */
export const GITHUB_LABEL = 'agentbox';

/** Who may start a run with a comment: people with a role in the repository, never any visitor. */
const TRUSTED = `contains(fromJSON('["OWNER","MEMBER","COLLABORATOR"]'), github.event.comment.author_association)`;

/**
 * When the job runs: a manual dispatch (write access), the label (triage access) or a trusted
 * person's `/agentbox …` comment on an issue (not on a pull request).
 */
const WHEN = [
  "github.event_name == 'workflow_dispatch'",
  `(github.event_name == 'issues' && github.event.label.name == '${GITHUB_LABEL}')`,
  `(github.event_name == 'issue_comment' && !github.event.issue.pull_request && startsWith(github.event.comment.body, '/agentbox ') && ${TRUSTED})`,
].join(' || ');

const SANDBOX = `sudo apt-get update
sudo apt-get install -y bubblewrap socat ripgrep
# Ubuntu 24.04 keeps unprivileged user namespaces (bubblewrap's) behind AppArmor.
if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0
fi
`;

const COMMENT = `if command -v agentbox >/dev/null; then
  agentbox ci summary --log-url "$LOG_URL" >"$RUNNER_TEMP/agentbox-comment.md"
else
  echo "agentbox could not be installed: see $LOG_URL" >"$RUNNER_TEMP/agentbox-comment.md"
fi
gh issue comment "$ISSUE_NUMBER" --repo "$GITHUB_REPOSITORY" --body-file "$RUNNER_TEMP/agentbox-comment.md"
`;

/** A GitHub expression, evaluated by the platform: only ever in `env:`, `with:` and `if:`. */
const gh = (expression: string) => `\${{ ${expression} }}`;

const LOG_URL = `${gh('github.server_url')}/${gh('github.repository')}/actions/runs/${gh('github.run_id')}`;

/**
 * .github/workflows/agentbox.yml. NOTE: `${{ }}` appears only in `env:`, `with:` and `if:`, never
 * in a `run:` script: an issue's title or a comment pasted into a script is script injection.
 */
export function githubWorkflow(agentboxVersion: string, source: string): string {
  const workflow = {
    name: 'agentbox',
    on: {
      workflow_dispatch: {
        inputs: {
          type: {
            description: 'What kind of run',
            type: 'choice',
            options: ['fix', 'scout', 'plan', 'review'],
            default: 'fix',
            required: true,
          },
          task: { description: 'What the run should do', type: 'string', required: true },
          model: {
            description: 'The model (empty: agentbox.yaml claude.model)',
            type: 'string',
            default: '',
          },
          budget: { description: 'End the run past this cost, in USD', type: 'string', default: '5' },
        },
      },
      issues: { types: ['labeled'] },
      issue_comment: { types: ['created'] },
    },
    permissions: {},
    jobs: {
      run: {
        if: WHEN,
        'runs-on': 'ubuntu-latest',
        'timeout-minutes': 120,
        permissions: { contents: 'write', issues: 'write' },
        steps: steps(source),
      },
    },
  };
  return renderYaml(
    workflow,
    [
      ` Written by agentbox init --ci github (agentbox ${agentboxVersion}); setup: agentbox docs/ci.md.`,
      ' Starts a run from the Actions tab, from the "agentbox" label on an issue, or from a',
      ' "/agentbox fix <task>" comment by an owner, member or collaborator; publishes it with --push.',
      ' Then, on your machine: agentbox fetch && agentbox merge <run>',
      sourceComment(source),
    ].join('\n'),
  );
}

function steps(source: string): object[] {
  return [
    // The run pushes with its own token (GIT_PUSH_TOKEN below), not one left in .git/config.
    { uses: 'actions/checkout@v4', with: { 'persist-credentials': false } },
    { uses: 'actions/setup-node@v4', with: { 'node-version': 24 } },
    { name: "Install Claude Code's sandbox", shell: 'bash', run: SANDBOX },
    { name: 'Install agentbox and Claude Code', shell: 'bash', run: installScript(source) },
    {
      name: 'Run agentbox',
      shell: 'bash',
      env: {
        ANTHROPIC_API_KEY: gh('secrets.ANTHROPIC_API_KEY'),
        GIT_PUSH_TOKEN: gh('github.token'),
        EVENT_NAME: gh('github.event_name'),
        INPUT_TYPE: gh('inputs.type'),
        INPUT_TASK: gh('inputs.task'),
        AGENTBOX_MODEL: gh('inputs.model'),
        AGENTBOX_BUDGET: gh("inputs.budget || '5'"),
        ISSUE_NUMBER: gh('github.event.issue.number'),
        ISSUE_TITLE: gh('github.event.issue.title'),
        ISSUE_BODY: gh('github.event.issue.body'),
        COMMENT_BODY: gh('github.event.comment.body'),
      },
      run: `${STRICT}${GIT_SETUP}${GITHUB_REQUEST}${runScript('agentbox ci summary >>"$GITHUB_STEP_SUMMARY" || true\n')}`,
    },
    {
      name: 'Comment on the issue',
      if: 'always() && github.event.issue.number',
      shell: 'bash',
      env: {
        GH_TOKEN: gh('github.token'),
        ISSUE_NUMBER: gh('github.event.issue.number'),
        LOG_URL,
      },
      run: COMMENT,
    },
  ];
}
