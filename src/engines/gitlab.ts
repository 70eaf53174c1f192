import { renderYaml } from './render.js';
import { GIT_SETUP, installScript, runScript, STRICT } from './script.js';
import { sourceComment } from './source.js';

/** Where the job goes; .gitlab-ci.yml includes it (a project's own pipeline stays its own). */
export const GITLAB_JOB_FILE = '.gitlab/agentbox.yml';

/** The origin GitLab checks out carries the job token, which may not push: the run pushes over this. */
const PUSH_REMOTE = 'git remote set-url origin "$CI_SERVER_URL/$CI_PROJECT_PATH.git"\n';

const COMMENT = `${STRICT}if [ -z "\${AGENTBOX_ISSUE_IID:-}" ] || [ -z "\${GITLAB_API_TOKEN:-}" ]; then exit 0; fi
case "$AGENTBOX_ISSUE_IID" in
  *[!0-9]*)
    echo "agentbox: AGENTBOX_ISSUE_IID \\"$AGENTBOX_ISSUE_IID\\" is not an issue number" >&2
    exit 0
    ;;
esac
comment="\${TMPDIR:-/tmp}/agentbox-comment.md"
agentbox ci summary --log-url "$CI_JOB_URL" >"$comment" || echo "agentbox did not record a run: see $CI_JOB_URL" >"$comment"
curl --fail --silent --show-error --request POST --header "PRIVATE-TOKEN: $GITLAB_API_TOKEN" \\
  --data-urlencode "body@$comment" "$CI_API_V4_URL/projects/$CI_PROJECT_ID/issues/$AGENTBOX_ISSUE_IID/notes" >/dev/null
`;

const variable = (value: string, description: string, options?: string[]) => ({
  value,
  description,
  ...(options ? { options } : {}),
});

/**
 * .gitlab/agentbox.yml: a job that runs when a pipeline is started by hand (Run pipeline, the API
 * or a trigger) with AGENTBOX_TASK set. NOTE: inputs reach the script as variables, which the
 * runner puts in the environment; the script only expands them inside double quotes.
 */
export function gitlabJob(agentboxVersion: string, source: string): string {
  const job = {
    // Prefilled in Run pipeline: GitLab shows descriptions and options of global variables only.
    variables: {
      AGENTBOX_TYPE: variable('fix', 'What kind of run', ['fix', 'scout', 'plan', 'review']),
      AGENTBOX_TASK: variable('', 'What the run should do'),
      AGENTBOX_MODEL: variable('', 'The model (empty: agentbox.yaml claude.model)'),
      AGENTBOX_BUDGET: variable('5', 'End the run past this cost, in USD'),
      AGENTBOX_ISSUE_IID: variable('', 'An issue number to comment the outcome on (needs GITLAB_API_TOKEN)'),
    },
    agentbox: {
      image: 'node:24-bookworm',
      rules: [
        {
          if: '$AGENTBOX_TASK && ($CI_PIPELINE_SOURCE == "web" || $CI_PIPELINE_SOURCE == "api" || $CI_PIPELINE_SOURCE == "trigger")',
        },
      ],
      timeout: '2h',
      variables: {
        // The job's container is the sandbox: runners' containers rarely allow bubblewrap inside.
        AGENTBOX_SANDBOX: 'container',
        GIT_PUSH_USER: 'oauth2',
      },
      before_script: [installScript(source).trimEnd()],
      script: [`${STRICT}${GIT_SETUP}${PUSH_REMOTE}${runScript()}`],
      after_script: [COMMENT],
    },
  };
  return renderYaml(
    job,
    [
      ` Written by agentbox init --ci gitlab (agentbox ${agentboxVersion}); setup: agentbox docs/ci.md.`,
      ' CI/CD variables to create: ANTHROPIC_API_KEY and GIT_PUSH_TOKEN (a project access token with',
      ' write_repository), both masked; GITLAB_API_TOKEN (scope api) to comment on an issue.',
      ' Start a run: Build > Pipelines > Run pipeline with AGENTBOX_TASK set, then on your machine:',
      ' agentbox fetch && agentbox merge <run>',
      sourceComment(source),
    ].join('\n'),
  );
}

/** .gitlab-ci.yml for a project that has none: only the include. */
export function gitlabRoot(): string {
  return renderYaml(
    { include: [{ local: GITLAB_JOB_FILE }] },
    ' Written by agentbox init --ci gitlab: your own jobs can go below the include.',
  );
}
